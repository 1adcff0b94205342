internal import CCurl

extension FetchFailure.Kind {
    /// The one table from libcurl's result codes to the spec's error kinds.
    ///
    /// `receivedBytes` separates a connection dropped before any response byte (`connect`)
    /// from one dropped mid-response (`truncated`, <doc:Fetching#Retries-and-timeouts>).
    /// `httpStatus` is the latest status line seen: a `3xx` means a refused hop is a
    /// `bad-redirect`, not a bad input URL, and a cut `4xx`/`5xx` body keeps the status
    /// the server gave, which already says what happened.
    ///
    /// `wasConnected` (the request was sent) tells a reply curl refuses to read as HTTP
    /// (HTTP/0.9, a 4-digit status) from a refused connection: bytes arrived, so `truncated`.
    init(curlCode code: CURLcode, receivedBytes: Bool, httpStatus: Int, wasConnected: Bool = false) {
        let isRedirect = (300...399).contains(httpStatus)
        // After a 3xx, the bytes seen belong to the redirect, not to the hop that failed.
        let hopReceivedBytes = receivedBytes && !isRedirect
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            self = .dns
        case CURLE_OPERATION_TIMEDOUT:
            self = .timeout
        case CURLE_COULDNT_CONNECT:
            self = .connect
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            self = .tls
        // A body shorter than its Content-Length (18), or a connection dropped mid-response.
        // A reply that is not HTTP as curl reads it (a NUL in a header line): bytes arrived, whatever hop.
        case CURLE_WEIRD_SERVER_REPLY:
            self = httpStatus >= 400 ? .http(httpStatus) : .truncated
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2,
            CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING:
            if httpStatus >= 400 {
                self = .http(httpStatus)
            } else {
                self = hopReceivedBytes ? .truncated : .connect
            }
        case CURLE_TOO_MANY_REDIRECTS:
            self = .tooManyRedirects
        // A Location naming file://, ftp:// or garbage; curl refuses to follow it.
        // The request URL is always http(s): on the first hop this is a reply curl would not
        // read (HTTP/0.9, "Unsupported response code"), which means bytes arrived.
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            self = isRedirect ? .badRedirect : (wasConnected || receivedBytes ? .truncated : .connect)
        // curl rejects a response header line over its 100 KB limit as out of memory: after a
        // status line that is the server's doing, not this machine's.
        case CURLE_OUT_OF_MEMORY where receivedBytes:
            self = .truncated
        case CURLE_FILESIZE_EXCEEDED:
            self = .tooLarge
        case CURLE_ABORTED_BY_CALLBACK:
            self = .interrupted
        case CURLE_OUT_OF_MEMORY, CURLE_WRITE_ERROR, CURLE_FAILED_INIT:
            self = .io
        default:
            // Anything else failed before a usable response: the spec's catch-all network kind.
            self = hopReceivedBytes ? .truncated : .connect
        }
    }
}
