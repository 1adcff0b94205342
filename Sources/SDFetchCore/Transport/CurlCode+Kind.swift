internal import CCurl

extension FetchFailure.Kind {
    /// The one table from libcurl's result codes to the spec's error kinds.
    ///
    /// `receivedBytes` separates a connection dropped before any response byte (`connect`)
    /// from one dropped mid-response (`truncated`); `redirected` tells a refused redirect
    /// target from a bad input URL.
    init(curlCode code: CURLcode, receivedBytes: Bool, redirected: Bool) {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            self = .dns
        case CURLE_OPERATION_TIMEDOUT:
            self = .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            self = .tls
        case CURLE_PARTIAL_FILE:
            self = .truncated
        case CURLE_TOO_MANY_REDIRECTS:
            self = .tooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            self = redirected ? .badRedirect : .connect
        case CURLE_FILESIZE_EXCEEDED:
            self = .tooLarge
        case CURLE_WRITE_ERROR:
            self = .io
        case CURLE_ABORTED_BY_CALLBACK:
            self = .interrupted
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM,
            CURLE_WEIRD_SERVER_REPLY:
            self = receivedBytes ? .truncated : .connect
        default:
            self = .connect
        }
    }
}
