/// A remote cache on an HTTP server that stores what it is sent: `GET` and `PUT`
/// of `BASE/cas/<sha256>` and `BASE/ac/<key digest>` (nginx with `dav_methods PUT` and
/// `create_full_put_path on`, bazel-remote, an object store's HTTP gateway).
///
/// Credentials: userinfo in the URL or `~/.netrc` (Basic), or a bearer token the caller
/// read from the environment; ``name`` masks the URL's password.
struct RemoteHTTPCache: RemoteCache {
    /// The URL without a final `/`.
    let base: String
    let name: String
    let connection: ConnectionOptions
    let bearerToken: String?
    let userAgent: String

    init(url: String, connection: ConnectionOptions, bearerToken: String?, userAgent: String) {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        name = Redaction.masked(base)
        self.connection = connection
        self.bearerToken = bearerToken
        self.userAgent = userAgent
    }

    func connect() -> any RemoteConnection {
        Session(
            base: base,
            connection: RemoteHTTPConnection(connection: connection, bearerToken: bearerToken, userAgent: userAgent))
    }

    /// One worker thread's kept-alive connection and the paths it asks for.
    private final class Session: RemoteConnection {
        let base: String
        let connection: RemoteHTTPConnection

        init(base: String, connection: RemoteHTTPConnection) {
            self.base = base
            self.connection = connection
        }

        func read(_ path: RemotePath, maxBytes: Int64, timeout: Duration) throws(RemoteFailure) -> [UInt8]? {
            switch connection.get(base + "/" + path.text, maxBytes: maxBytes, timeout: timeout) {
            case .status(200, let body): return body
            case .status(404, _): return nil
            case .status(let status, _): throw RemoteFailure("GET \(path.text): HTTP \(status)")
            case .failed(let detail): throw RemoteFailure("GET \(path.text): \(detail)", isUnanswered: true)
            case .tooLarge(let detail): throw RemoteFailure("GET \(path.text): \(detail)")
            }
        }

        /// `PUT` the object, then the record: two requests on the kept-alive connection. No
        /// `HEAD` first: a name is its content, so writing it again changes nothing, and on
        /// a cold remote a `HEAD` would be a third request per URL.
        func upload(
            _ bytes: [UInt8], at object: RemotePath, record: [UInt8], at recordPath: RemotePath, timeout: Duration
        ) throws(RemoteFailure) {
            try write(object, bytes, timeout: timeout)
            try write(recordPath, record, timeout: RemoteTier.recordTimeout)
        }

        private func write(_ path: RemotePath, _ bytes: [UInt8], timeout: Duration) throws(RemoteFailure) {
            switch connection.put(base + "/" + path.text, bytes, timeout: timeout) {
            case .status(200...299, _): return
            case .status(let status, _): throw RemoteFailure("PUT \(path.text): HTTP \(status)")
            case .failed(let detail): throw RemoteFailure("PUT \(path.text): \(detail)", isUnanswered: true)
            case .tooLarge(let detail): throw RemoteFailure("PUT \(path.text): \(detail)")
            }
        }
    }
}
