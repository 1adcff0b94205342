/// One HTTP GET as the engine should perform it.
public struct TransferRequest: Sendable {
    public var url: String
    /// Extra header lines, `Name: value`; they replace same-named defaults such as `Accept`.
    public var headers: [String]
    public var userAgent: String
    /// Bounds connection set-up and any stall; a steady slow body is never cut.
    public var timeout: Duration
    /// Largest accepted body; larger transfers are aborted as soon as that is known.
    public var maxBytes: Int64
    /// Redirect hops followed (curl's meaning), http and https targets only.
    public var maxRedirects: Int
    /// Bounds the whole transfer, redirects included (`--max-time`); nil means no bound.
    public var maxTime: Duration?
    /// How TLS and proxies are set up (`--cacert`, `-k`, `--proxy`).
    public var connection = ConnectionOptions()
    /// A folder descriptor where a `2xx` body larger than ``SpilledBody/spillThreshold`` goes
    /// while it arrives (the cache's `tmp/`); -1 keeps every body in memory.
    public var spillFolder: Int32 = -1
    /// Counts this request's body bytes as they arrive, for a progress display; nil: none.
    public var meter: TransferMeter?

    public init(
        url: String, headers: [String] = [], userAgent: String = "sdfetch", timeout: Duration = .seconds(15),
        maxBytes: Int64 = 50 << 20, maxRedirects: Int = 5
    ) {
        self.url = url
        self.headers = headers
        self.userAgent = userAgent
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
    }
}

/// What came back from one transfer, successful or not.
public struct TransferResponse: Sendable {
    /// nil when the transfer completed at the HTTP level (whatever the status code).
    public var failure: FetchFailure?
    /// Final response status after redirects; 0 when no response arrived.
    public var httpStatus: Int
    /// The body of a 2xx response when it stayed in memory; empty otherwise.
    public var body: [UInt8]
    /// The body of a 2xx response that went to a file as it arrived (see ``SpilledBody``);
    /// `body` is then empty.
    public var spilled: SpilledBody?
    public var etag: String?
    public var lastModified: String?
    /// `Retry-After` in seconds, when the server sent the delta form or a date.
    public var retryAfter: Double?
    /// Redirect hops curl followed, and the URL of the last one (for `-v`).
    public var redirectCount = 0
    public var finalURL: String?

    public init(
        failure: FetchFailure? = nil, httpStatus: Int = 0, body: [UInt8] = [], etag: String? = nil,
        lastModified: String? = nil, retryAfter: Double? = nil
    ) {
        self.failure = failure
        self.httpStatus = httpStatus
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.retryAfter = retryAfter
    }
}

/// TLS and proxy settings, as curl's `--cacert`, `-k` and `--proxy` mean them.
///
/// Without a proxy here, libcurl reads `http_proxy`, `https_proxy`, `all_proxy` and
/// `no_proxy` itself, exactly as the `curl` tool does (SPEC "Environment").
public struct ConnectionOptions: Sendable, Equatable {
    /// A PEM bundle of certificate authorities trusted instead of the system's.
    public var caCertificateFile: String?
    /// Skip verifying the server's certificate and name (`-k`): TLS still encrypts.
    public var isInsecure = false
    /// Proxy URL (`http://host:port`, `socks5h://...`), used for every request.
    public var proxy: String?

    public init(caCertificateFile: String? = nil, isInsecure: Bool = false, proxy: String? = nil) {
        self.caCertificateFile = caCertificateFile
        self.isInsecure = isInsecure
        self.proxy = proxy
    }
}
