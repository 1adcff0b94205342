internal import CCurl
internal import CSDFetchShims
import FoundationEssentials

/// One kept-alive connection to a remote cache's HTTP server: a curl easy handle driven
/// with `curl_easy_perform`, so the calling thread blocks for the request.
///
/// Why not the ``CurlEngine``: its loops pace requests per host (`--per-host`), judge hosts
/// by the origin rules (`--host-failures`) and count `--summary`'s `requests`; a remote
/// cache is none of those, and its two request shapes (GET, and PUT of one buffer) need
/// none of the engine's machinery. The remote's worker threads each own one
/// (``RemoteHTTPCache``); the class is not `Sendable`, so a handle never changes thread.
///
/// Bounds (SDFetchCore.docc, Fetching, "Remote cache"): a connection must be made within
/// ``connectTimeout`` and a request must end within its `timeout`, so a remote that is down
/// or hangs costs about a second before the remote is switched off.
final class RemoteHTTPConnection {
    private let handle: UnsafeMutableRawPointer
    private let headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    /// Connection set-up bound: a loopback or LAN cache answers in milliseconds.
    static let connectTimeout: Duration = .seconds(1)

    /// `bearerToken`: sent as `Authorization: Bearer ...`; userinfo in the URLs (Basic) and
    /// `~/.netrc` are curl's own. `connection`: the run's TLS and proxy settings.
    init(connection: ConnectionOptions, bearerToken: String?, userAgent: String) {
        _ = curlGlobalInit
        guard let handle = curl_easy_init() else { preconditionFailure("curl_easy_init failed: out of memory") }
        self.handle = handle
        var list: UnsafeMutablePointer<curl_slist>? = nil
        // PUT through POSTFIELDS would label the body a form; the server stores bytes.
        list = curl_slist_append(list, "Content-Type: application/octet-stream")
        list = curl_slist_append(list, "Expect:")
        if let bearerToken { list = curl_slist_append(list, "Authorization: Bearer \(bearerToken)") }
        headerList = list
        setLong(CURLOPT_NOSIGNAL, 1)
        setString(CURLOPT_PROTOCOLS_STR, "http,https")
        setLong(CURLOPT_FOLLOWLOCATION, 0)
        setLong(CURLOPT_NETRC, 1)  // CURL_NETRC_OPTIONAL: the URL's userinfo first, else ~/.netrc
        setLong(CURLOPT_CONNECTTIMEOUT_MS, Int(Self.connectTimeout.components.seconds * 1000))
        setString(CURLOPT_USERAGENT, userAgent)
        _ = CSDFetch_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        if let file = connection.caCertificateFile { setString(CURLOPT_CAINFO, file) }
        if connection.isInsecure {
            setLong(CURLOPT_SSL_VERIFYPEER, 0)
            setLong(CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let proxy = connection.proxy { setString(CURLOPT_PROXY, proxy) }
        if connection.isProxyInsecure {
            setLong(CURLOPT_PROXY_SSL_VERIFYPEER, 0)
            setLong(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
        }
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// What a request met: an HTTP status and, for a GET, the body; or a transport error.
    enum Answer {
        case status(Int, body: [UInt8])
        /// No HTTP answer (refused, timed out, TLS); the text names the cause, never the
        /// URL's credentials (curl's messages carry no URL).
        case failed(String)
        /// A body over the request's bound.
        case tooLarge(String)
    }

    /// GET `url`, keeping at most `maxBytes` of a 2xx answer's body: a longer one fails the
    /// request. Any other answer's body is bounded by ``otherBodyLimit`` instead.
    func get(_ url: String, maxBytes: Int64, timeout: Duration) -> Answer {
        perform(url, method: .get, upload: nil, maxBytes: maxBytes, timeout: timeout)
    }

    /// PUT `bytes` to `url`.
    func put(_ url: String, _ bytes: [UInt8], timeout: Duration) -> Answer {
        perform(url, method: .put, upload: bytes, maxBytes: 1 << 20, timeout: timeout)
    }

    // MARK: - The transfer

    private enum Method { case get, put }

    /// The bound on a body that is not the object asked for (a 404 or 5xx page): a server's
    /// error page is a few hundred bytes, and the object's own bound may be smaller (a
    /// 43-byte image), which would make a miss look like a remote error.
    static let otherBodyLimit: Int64 = 64 << 10

    /// The body as it arrives, and its bound: the write callback's data.
    private final class Sink {
        var bytes: [UInt8] = []
        let handle: UnsafeMutableRawPointer
        let maxBytes: Int64
        /// The bound the body went over, if it did.
        var overflowed: Int64?

        init(handle: UnsafeMutableRawPointer, maxBytes: Int64) {
            self.handle = handle
            self.maxBytes = maxBytes
        }

        /// `maxBytes` for a 2xx answer's body, ``otherBodyLimit`` for any other's.
        var limit: Int64 {
            var status = 0
            _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            return (200...299).contains(status) ? maxBytes : RemoteHTTPConnection.otherBodyLimit
        }
    }

    private func perform(
        _ url: String, method: Method, upload: [UInt8]?, maxBytes: Int64, timeout: Duration
    ) -> Answer {
        let sink = Sink(handle: handle, maxBytes: maxBytes)
        let context = Unmanaged.passUnretained(sink).toOpaque()
        setString(CURLOPT_URL, url)
        setLong(CURLOPT_TIMEOUT_MS, Int(timeout / .milliseconds(1)))
        // HTTPGET undoes a previous PUT's POSTFIELDS.
        if method == .get { setLong(CURLOPT_HTTPGET, 1) }
        _ = CSDFetch_curl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, userData in
            let sink = Unmanaged<Sink>.fromOpaque(userData!).takeUnretainedValue()
            let length = size * count
            let limit = sink.limit
            guard Int64(sink.bytes.count + length) <= limit else {
                sink.overflowed = limit
                return 0  // curl ends the transfer with CURLE_WRITE_ERROR
            }
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
            return length
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        errorBuffer[0] = 0
        let code: CURLcode
        if let upload {
            setString(CURLOPT_CUSTOMREQUEST, "PUT")
            setLong(CURLOPT_POSTFIELDSIZE, upload.count)
            code = upload.withUnsafeBytes { raw in
                // COPYPOSTFIELDS would copy every upload; the buffer outlives the perform.
                _ = CSDFetch_curl_easy_setopt_pointer(
                    handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
                defer { _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_POSTFIELDS, nil) }
                return curl_easy_perform(handle)
            }
            _ = CSDFetch_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil)
        } else {
            code = curl_easy_perform(handle)
        }
        withExtendedLifetime(sink) {}
        if let limit = sink.overflowed { return .tooLarge("the body exceeds \(limit) bytes") }
        guard code == CURLE_OK else {
            let message = String(cString: errorBuffer)
            return .failed(message.isEmpty ? String(cString: curl_easy_strerror(code)) : message)
        }
        var status = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .status(status, body: sink.bytes)
    }

    private func setLong(_ option: CURLoption, _ value: Int) {
        _ = CSDFetch_curl_easy_setopt_long(handle, option, value)
    }

    private func setString(_ option: CURLoption, _ value: String) {
        _ = CSDFetch_curl_easy_setopt_string(handle, option, value)
    }
}
