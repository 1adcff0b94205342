/// Everything that shapes how one URL is fetched (sdfetch(1) FETCH OPTIONS, less I/O ones).
public struct FetchOptions: Sendable {
    /// `-j`: transfers in flight over all hosts, a cap on this process's own resources; the
    /// politeness that matters to servers is ``TransferPacing/perHost``.
    public var concurrency = 256
    public var timeout: Duration = .seconds(15)
    public var retries = 2
    /// Backoff and `Retry-After` timing of those retries.
    public var retryPolicy = RetryPolicy()
    /// Freshness of cache entries and blacklist records.
    public var maxAge: Duration = .seconds(7 * 24 * 3600)
    /// Cache cap in bytes (`--max-cache-size`), counting every byte of the entries' files.
    /// Enforced by ``DiskCache/enforceLimit(maxBytes:protecting:listing:)`` after a run.
    ///
    /// 5 GiB, ccache's default: a list whose images exceed the cap is fetched again in part
    /// on every run, and at 1 GiB that began at about 15,000 web images (the bench's
    /// 20,000 make 1.3 GiB), well inside what a CI job warms.
    public var maxCacheSize: Int64 = 5 << 30
    public var refresh = false
    /// `--ignore-opt-outs`: store images whose response opts out of AI use (`X-Robots-Tag`).
    public var ignoreOptOuts = false
    public var offline = false
    public var retryFailed = false
    public var verify: VerifyMode = .structure
    public var maxBytes: Int64 = 50 << 20
    public var maxPixels: Int64 = 100_000_000
    public var maxRedirects = 5
    public var hostFailures = 5
    public var headers: [String] = []
    /// `--key-ignore-query`: query parameters left out of each key, still sent.
    public var keyQueryFilter = KeyQueryFilter()
    public var userAgent = "sdfetch/\(SDFetchVersion.string)"
    /// `--per-host` (6 by default, a browser's number), `--wait`, `--limit-rate`.
    public var pacing = TransferPacing(perHost: 6)
    /// `--cacert`, `-k`, `--proxy`.
    public var connection = ConnectionOptions()
    /// `--max-time`: bound on one whole transfer; nil means none.
    public var maxTime: Duration?
    /// `--speed-limit` and `--speed-time`: a transfer slower than this over its window fails
    /// as `timeout`, so every transfer ends in bounded time.
    public var lowSpeed = LowSpeedLimit.standard
    /// `--host-down-for`: how long a host found down (its name does not resolve, or it gave
    /// no answer within the timeout) is remembered in the cache directory, so a re-run
    /// does not wait for it again; zero remembers nothing. `retryFailed` ignores the memory.
    public var hostDownFor: Duration = .seconds(3600)
    /// `--remote-cache`, `--remote-cache-mode`: a second cache tier shared by a fleet.
    public var remoteCache = RemoteCacheOptions()

    public init() {}
}
