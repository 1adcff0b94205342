internal import CCurl
internal import CSDFetchShims
import FoundationEssentials
import Glibc

extension CurlTransfer {
    /// Builds the response once curl reports the transfer done with `code`.
    ///
    /// Exactly one error kind comes out: a cut made on purpose (`too-large`) first, then
    /// curl's code through the one table in `CurlCode+Kind.swift`, then the HTTP status.
    /// The body moves into the response without a copy.
    func response(code: CURLcode) -> TransferResponse {
        var status = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if status != 0 { head.status = status }
        var failure: FetchFailure?
        switch overflow {
        case .tooLarge:
            failure = FetchFailure(.tooLarge, "body exceeds \(ByteCountText.render(request.maxBytes))")
        case .discardedBody:
            failure = FetchFailure(.http(head.status), "server answered \(head.status)")
        case .spillFailed(let code):
            failure = Self.spillFailure(code)
        case .unofferedCoding(let coding) where head.isSuccess:
            failure = FetchFailure(.notAnImage, coding.detail)
        case .unofferedCoding:
            failure = FetchFailure(.http(head.status), "server answered \(head.status)")
        case nil where code != CURLE_OK:
            failure = curlFailure(code)
        case nil where !head.isSuccess:
            failure = FetchFailure(.http(head.status), "server answered \(head.status)")
        case nil:
            failure = nil
        }
        var body: (bytes: [UInt8], spilled: SpilledBody?) = ([], nil)
        if failure == nil {
            if let taken = takeBody() { body = taken } else { failure = Self.spillFailure(errno) }
        }
        var response = TransferResponse(
            failure: failure, httpStatus: head.status, body: body.bytes, etag: head.etag,
            lastModified: head.lastModified, retryAfter: head.retryAfter)
        response.spilled = body.spilled
        response.optsOut = head.optsOut
        var contentType: UnsafePointer<CChar>?
        _ = CSDFetch_curl_easy_getinfo_string(handle, CURLINFO_CONTENT_TYPE, &contentType)
        response.mediaType = contentType.flatMap(Self.mediaType(of:))
        if overflow == nil, let failure { response.refusal = refusal(code, failure) }
        if head.contentEncoding.map({ $0.lowercased() == "identity" }) ?? true {
            response.declaredSHA256 = head.digestSHA256
        }
        var redirects = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        if redirects > 0 {
            response.redirectCount = redirects
            var url: UnsafePointer<CChar>?
            _ = CSDFetch_curl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &url)
            response.finalURL = url.map { String(cString: $0) }
            // Validators are the last hop's: kept only when it is the origin the key names,
            // or they would be replayed to a host that never sent them.
            if response.finalURL.flatMap(Origin.init) != Origin(request.url) {
                response.etag = nil
                response.lastModified = nil
            }
        }
        return response
    }

    /// Whether `failure`, from curl's `code`, says the host turned the connection away:
    /// refused, reset or closed before any answer byte (`connect`), or a handshake the
    /// server broke off (`CURLE_SSL_CONNECT_ERROR`; a certificate that fails the check is
    /// `CURLE_PEER_FAILED_VERIFICATION`, which a user's `--cacert` may mend, so not this).
    /// Never through a proxy, whose refusals are its own and would take every host away;
    /// a connect that failed otherwise than refused (no route: this machine's network) is
    /// not the host's answer either.
    private func refusal(_ code: CURLcode, _ failure: FetchFailure) -> HostRefusal? {
        guard !receivedBytes, request.connection.proxy == nil, !HostProbes.proxyInEnvironment else { return nil }
        if code == CURLE_COULDNT_CONNECT {
            var osError = 0
            _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
            return osError == Int(ECONNREFUSED) ? .refused : nil
        }
        let isTurnedAway = failure.kind == .connect || (failure.kind == .tls && code == CURLE_SSL_CONNECT_ERROR)
        return isTurnedAway ? .turnedAway : nil
    }

    /// A body that could not be written to its spill file (a full disk): this machine's fault.
    private static func spillFailure(_ code: Int32) -> FetchFailure {
        FetchFailure(.io, "cannot write the download to the cache's tmp folder: \(errnoText(code))")
    }

    /// The failure for curl's `code`: kind from the one table, detail from curl's message,
    /// and local resource exhaustion (`EMFILE`, `ENOMEM`) as `io`, never the host's fault.
    private func curlFailure(_ code: CURLcode) -> FetchFailure {
        var osError = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
        let message = String(cString: errorBuffer)
        var detail = (message.isEmpty ? String(cString: curl_easy_strerror(code)) : message).lowercased()
        if let socketError, let local = LocalResourceError(errno: socketError) {
            return FetchFailure(.io, "cannot open a socket: \(local.detail)")
        }
        if let local = LocalResourceError(errno: Int32(osError)) {
            return FetchFailure(.io, "\(detail) (\(local.detail))")
        }
        // A proxy that refused the tunnel: its failure, never the URL's (so never a
        // permanent `http-4xx` taken from the CONNECT reply's status line).
        var connectCode = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        if connectCode != 0, !(200...299).contains(connectCode) {
            return FetchFailure(.connect, "the proxy answered \(connectCode) to CONNECT")
        }
        let kind = FetchFailure.Kind(
            curlCode: code, receivedBytes: receivedBytes, httpStatus: head.status, wasConnected: isConnected)
        if code == CURLE_OUT_OF_MEMORY, kind == .truncated {
            detail = "response header too large (a header line over curl's 100 KB limit)"
        }
        return FetchFailure(kind, detail)
    }

    /// The response of a transfer the loop ended itself: no byte for `--timeout`.
    func stalledResponse() -> TransferResponse {
        let seconds = Double(timeoutNanoseconds) / 1_000_000_000
        let failure = FetchFailure(.timeout, "no data for \(seconds.plainText) s")
        return TransferResponse(failure: failure, httpStatus: head.status, retryAfter: head.retryAfter)
    }

    /// Whether the transfer fell under `limit` over the window ending at `now`; a window
    /// that ends well opens the next one.
    func isTooSlow(under limit: LowSpeedLimit, now: UInt64) -> Bool {
        guard now &- speedWindowStart >= limit.window.nanosecondsClamped else { return false }
        if speedWindowBytes < limit.bytesPerWindow, !wasRateLimitedInWindow, !isPausedForRate { return true }
        speedWindowStart = now
        speedWindowBytes = 0
        wasRateLimitedInWindow = false
        return false
    }

    /// `text/html` of `Content-Type: text/html; charset=utf-8`, at most 100 characters;
    /// nil when empty.
    static func mediaType(of contentType: UnsafePointer<CChar>) -> String? {
        let bytes = UnsafeRawBufferPointer(start: contentType, count: strlen(contentType))
        let text = String(decoding: bytes, as: UTF8.self)
        let type = text.prefix { $0 != ";" }.trimmingBlanks().lowercased()
        return type.isEmpty ? nil : String(type.prefix(100))
    }

    /// The response of a transfer the loop ended itself for its rate (``LowSpeedLimit``).
    func tooSlowResponse(under limit: LowSpeedLimit) -> TransferResponse {
        let seconds = limit.window.timeInterval
        let failure = FetchFailure(
            .timeout,
            "slower than \(limit.bytesPerSecond) bytes/s for \(seconds.plainText) s (\(speedWindowBytes) bytes)")
        return TransferResponse(failure: failure, httpStatus: head.status, retryAfter: head.retryAfter)
    }
}

extension Double {
    /// `1` for whole numbers, `0.5` otherwise: what a person writes for seconds.
    fileprivate var plainText: String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}
