/// What a ``FetchRun`` reports, in order; the stream ends after `finished`.
public enum FetchEvent: Sendable {
    /// Unique URLs or invalid lines that are done, in completion order, each counted in the
    /// summary already. Batched because a warm run completes tens of thousands a second and
    /// each hand-off to the consumer costs a thread wake-up: a batch holds what was
    /// published since the consumer last took (``RunLedger``).
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
