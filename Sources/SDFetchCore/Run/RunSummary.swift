/// Totals of a whole run.
public struct RunSummary: Sendable, Equatable {
    /// Results per status; a URL stopped by Ctrl-C is counted in ``interrupted`` instead
    /// of `failed` (<doc:Fetching#Results>: the summary counts interrupted URLs apart).
    public var counts: [FetchStatus: Int] = [:]
    public var interrupted = 0
    /// Input occurrences coalesced into an earlier one of the same key.
    public var duplicates = 0
    /// Bytes of bodies downloaded in this run.
    public var downloadedBytes: Int64 = 0
    /// `failed` results per error kind (`--summary`'s `errors`).
    public var errorKinds: [FetchFailure.Kind: Int] = [:]
    /// URLs a server answered with an HTTP status (`--summary`'s `requests`); retries of one
    /// URL are not counted again, and a refused connection is not a request the server saw.
    public var requests = 0
    public var unreadableInputs = 0
    /// Ctrl-C or SIGTERM stopped the run early.
    public var wasInterrupted = false
    /// Digests of every unique key this run handled (in its shard), for
    /// ``DiskCache/enforceLimit(maxBytes:protecting:)`` to evict them last. It is the run's
    /// de-duplication set handed over at the end, so it costs no extra memory: 16 bytes
    /// plus set overhead per unique key, bounded by the unique URLs of the input.
    public var usedKeys: Set<KeyDigest> = []

    public init() {}

    public func count(_ status: FetchStatus) -> Int { counts[status, default: 0] }
}
