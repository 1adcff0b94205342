internal import CCurl
internal import CSDFetchShims
import Foundation

/// One easy handle and everything curl writes into while it runs.
///
/// Never `Sendable`: created, driven and destroyed on the ``CurlEngine`` loop thread only.
/// curl's callbacks find it again through an unretained pointer in `*DATA`; the engine's
/// table of running transfers keeps it alive until the handle is removed.
final class CurlTransfer {
    let handle: UnsafeMutableRawPointer
    let id: UInt64
    let request: TransferRequest
    let continuation: CheckedContinuation<TransferResponse, Never>

    private(set) var body: [UInt8] = []
    private(set) var httpStatus = 0
    private(set) var etag: String?
    private(set) var lastModified: String?
    private(set) var retryAfter: Double?
    private(set) var receivedBytes = false
    private(set) var exceededMaxBytes = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// curl writes its message here; it must outlive the transfer.
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    init?(id: UInt64, request: TransferRequest, continuation: CheckedContinuation<TransferResponse, Never>) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.id = id
        self.request = request
        self.continuation = continuation
        configure()
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
    }

    static func from(userData: UnsafeMutableRawPointer?) -> CurlTransfer {
        guard let userData else { preconditionFailure("curl callback without its transfer") }
        return Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
    }

    // MARK: - Options

    private func configure() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let timeoutMS = max(1, Int(request.timeout.components.seconds * 1000 + request.timeout.components.attoseconds / 1_000_000_000_000_000))
        setLong(CURLOPT_NOSIGNAL, 1)
        setString(CURLOPT_URL, request.url)
        setString(CURLOPT_PROTOCOLS_STR, "http,https")
        setString(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        setLong(CURLOPT_FOLLOWLOCATION, request.maxRedirects > 0 ? 1 : 0)
        setLong(CURLOPT_MAXREDIRS, request.maxRedirects)
        setString(CURLOPT_USERAGENT, request.userAgent)
        setLong(CURLOPT_CONNECTTIMEOUT_MS, timeoutMS)
        // A stall is "no byte for SEC seconds": under 1 byte/s for the whole window.
        setLong(CURLOPT_LOW_SPEED_LIMIT, 1)
        setLong(CURLOPT_LOW_SPEED_TIME, max(1, (timeoutMS + 999) / 1000))
        _ = CSDFetch_curl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBytes))
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, &errorBuffer)

        var lines = request.headers
        let names = Set(lines.compactMap { $0.split(separator: ":", maxSplits: 1).first?.lowercased() })
        if !names.contains("accept") { lines.append("Accept: image/*,*/*;q=0.8") }
        for line in lines { headerList = curl_slist_append(headerList, line) }
        _ = CSDFetch_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)

        _ = CSDFetch_curl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, userData in
            CurlTransfer.from(userData: userData).receive(body: data, count: size * count)
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = CSDFetch_curl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, userData in
            CurlTransfer.from(userData: userData).receive(header: data, count: size * count)
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
    }

    private func setLong(_ option: CURLoption, _ value: Int) {
        _ = CSDFetch_curl_easy_setopt_long(handle, option, value)
    }

    private func setString(_ option: CURLoption, _ value: String) {
        // curl copies string options (since 7.17), so a temporary C string is enough.
        _ = value.withCString { CSDFetch_curl_easy_setopt_string(handle, option, $0) }
    }

    // MARK: - Callbacks

    private func receive(body data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        receivedBytes = true
        // Only 2xx responses carry an image; other bodies are read and dropped so the
        // connection stays reusable.
        guard (200...299).contains(httpStatus) else { return count }
        if Int64(body.count + count) > request.maxBytes {
            exceededMaxBytes = true
            return 0
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return count
    }

    private func receive(header data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        receivedBytes = true
        let line = data.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
        if line.hasPrefix("HTTP/") {
            // A new response (after a redirect or a 100): forget the previous one's fields.
            let parts = line.split(separator: " ", maxSplits: 2)
            httpStatus = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            etag = nil
            lastModified = nil
            retryAfter = nil
            return count
        }
        guard let colon = line.firstIndex(of: ":") else { return count }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        switch name {
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "retry-after": retryAfter = RetryAfter.seconds(from: value)
        default: break
        }
        return count
    }

    // MARK: - Completion

    /// Builds the response once curl reports the transfer done with `code`.
    func response(code: CURLcode) -> TransferResponse {
        var status = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if status != 0 { httpStatus = status }
        var redirects = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        var failure: FetchFailure?
        if exceededMaxBytes {
            failure = FetchFailure(.tooLarge, "body exceeds \(request.maxBytes) bytes")
        } else if code != CURLE_OK {
            let kind = FetchFailure.Kind(curlCode: code, receivedBytes: receivedBytes, redirected: redirects > 0)
            let message = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let detail = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
            failure = FetchFailure(kind, detail.lowercased())
        } else if !(200...299).contains(httpStatus) {
            failure = FetchFailure(.http(httpStatus), "server answered \(httpStatus)")
        }
        return TransferResponse(
            failure: failure, httpStatus: httpStatus, body: failure == nil ? body : [], etag: etag,
            lastModified: lastModified, retryAfter: retryAfter)
    }
}
