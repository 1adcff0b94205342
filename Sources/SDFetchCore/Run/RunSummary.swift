/// Totals of a whole run.
public struct RunSummary: Sendable, Equatable {
    /// Results per status; a URL stopped by Ctrl-C is counted in ``interrupted`` instead
    /// of `failed` (<doc:Fetching#Results>: the summary counts interrupted URLs apart).
    public var counts: [FetchStatus: Int] = [:]
    public var interrupted = 0
    /// Input occurrences coalesced into an earlier one of the same key.
    public var duplicates = 0
    /// Bytes of the images this run downloaded and stored (`--summary`'s `bytes`).
    public var downloadedBytes: Int64 = 0
    /// Body bytes received over the network, whatever became of them: failed, refused and
    /// interrupted transfers count too (`--summary`'s `received_bytes`, the closing line's
    /// "downloaded").
    public var receivedBytes: Int64 = 0
    /// `failed` results per error kind (`--summary`'s `errors`).
    public var errorKinds: [FetchFailure.Kind: Int] = [:]
    /// HTTP requests sent (`--summary`'s `requests`): every try and every redirect hop, as
    /// a server's log counts them; a connection that never got as far as a request is none.
    public var requests = 0
    public var unreadableInputs = 0
    /// Ctrl-C or SIGTERM stopped the run early.
    public var wasInterrupted = false
    /// Digests of every unique key this run handled (in its shard), for
    /// ``DiskCache/enforceLimit(maxBytes:protecting:listing:)`` to evict them last. It is the run's
    /// de-duplication set handed over at the end, so it costs no extra memory: 16 bytes
    /// plus set overhead per unique key, bounded by the unique URLs of the input.
    public var usedKeys = KeyDigestSet()

    public init() {}

    public func count(_ status: FetchStatus) -> Int { counts[status, default: 0] }
}
