/// What a ``FetchRun`` reports, in order; the stream ends after `finished`.
public enum FetchEvent: Sendable {
    /// Unique URLs or invalid lines that are done, in completion order. Batched because a
    /// warm run completes tens of thousands a second and each hand-off to the consumer
    /// costs a thread wake-up; a batch is sent whenever the run is about to wait.
    case results([FetchResult])
    /// An input source could not be read (the run goes on; exit status 3).
    case unreadableInput(source: String, detail: String)
    /// Every input line has been read: `duplicates` holds, per key met more than once, its
    /// further occurrences in the whole input, final from now on. Results sent before this
    /// may carry a smaller ``FetchResult/duplicates``; results sent after carry the final one.
    case inputFinished(duplicates: [KeyDigest: Int])
    /// Every input was read and every URL is done.
    case finished(RunSummary)
}

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
