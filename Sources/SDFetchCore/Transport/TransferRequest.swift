/// One HTTP GET as the engine should perform it.
public struct TransferRequest: Sendable {
    public var url: String
    /// Extra header lines, `Name: value`; they replace same-named defaults such as `Accept`.
    public var headers: [String]
    public var userAgent: String
    /// Bounds connection set-up and any stall; a steady body is cut only under ``lowSpeed``.
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
    /// The least rate kept over a window (`--speed-limit`, `--speed-time`); nil: none.
    public var lowSpeed: LowSpeedLimit?

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
