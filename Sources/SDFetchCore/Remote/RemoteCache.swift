/// A server kind that can hold a second cache tier for a fleet of runners
/// (SDFetchCore.docc, Fetching, "Remote cache"): content-addressed image bytes and small
/// URL records, under the names ``RemotePath`` gives them.
///
/// Two conformers: ``RemoteHTTPCache`` (GET and PUT, as a WebDAV nginx or
/// bazel-remote accepts) and ``RemoteRedisCache``. The tier (``RemoteTier``) gives each of its
/// worker threads one ``RemoteConnection`` per remote, so a connection is kept alive
/// across requests and never shared between threads.
protocol RemoteCache: Sendable {
    /// The remote's URL with any password masked: what warnings, `-v` and results name.
    var name: String { get }
    /// A new connection for the calling thread, which alone uses it.
    func connect() -> any RemoteConnection
}

/// One thread's connection to a remote: blocking calls, each bounded in time.
protocol RemoteConnection: AnyObject {
    /// The bytes stored at `path`; nil when nothing is. `maxBytes` bounds what is read: a
    /// larger value is a failure, never a partial read.
    func read(_ path: RemotePath, maxBytes: Int64, timeout: Duration) throws(RemoteFailure) -> [UInt8]?
    /// Stores `bytes` at `object` unless the remote holds it (a name is its content), then
    /// `record` at `recordPath`: last, so a runner that finds the record finds the bytes.
    /// `timeout` bounds the object's request; the record's take ``RemoteTier/recordTimeout``.
    func upload(
        _ bytes: [UInt8], at object: RemotePath, record: [UInt8], at recordPath: RemotePath, timeout: Duration
    ) throws(RemoteFailure)
}

/// Why a remote request did not give an answer: lower-case, names the cause, never a password.
struct RemoteFailure: Error, Sendable {
    let detail: String
    /// No connection, or no answer within the request's time: the remote is down or hangs,
    /// not merely refusing one request.
    let isUnanswered: Bool

    init(_ detail: String, isUnanswered: Bool = false) {
        self.detail = detail
        self.isUnanswered = isUnanswered
    }
}
