import AsyncAlgorithms

/// A whole batch: read inputs, de-duplicate, fetch, report (the CLI's main job).
///
/// Two stages joined by a channel (see <doc:Pipeline>):
/// 1. ``RunIntake`` reads lines, identifies and de-duplicates keys, looks each up in the
///    cache (warm hits are answered inline, without a task), starts the network steps of
///    the rest in a task group, runs each result's last step (``delivery``: the CLI's
///    `-o`, which alone may still change a status) where the result is made, and hands
///    results on in batches.
/// 2. ``RunTally`` counts each result, once, for the bar (``progress``) and for the
///    summary, before it reaches `events`.
///
/// Each key is fetched once per run however often it appears; later occurrences raise the
/// key's `duplicates` and the summary's total. A result carries the count known when it is
/// reported; ``FetchEvent/inputFinished(duplicates:)`` gives every key's final count, so a
/// consumer that needs it exact whatever the timing (JSON) can wait for it.
/// At most a few times `concurrency` URLs are in flight, so the reader waits when the
/// fetcher is full and a list of any length runs in bounded memory (the seen-set holds
/// one 16-byte digest per unique key; it is handed to the summary as ``RunSummary/usedKeys``
/// at the end).
public struct FetchRun: Sendable {
    public let fetcher: Fetcher
    public let sources: [InputSource]
    /// Only keys in this shard are processed (`--shard K/N`).
    public var shard: Shard?
    /// The last step of each result before it is counted; nil: none.
    public var delivery: (any ResultDelivery)?
    public let progress: RunProgress
    /// Results per hand-off when nothing waits (a warm run): large enough to make the
    /// consumer's wake-up rare, small enough that output still streams.
    static let resultBatch = 256

    public init(fetcher: Fetcher, sources: [InputSource], shard: Shard? = nil, delivery: (any ResultDelivery)? = nil) {
        self.fetcher = fetcher
        self.sources = sources
        self.shard = shard
        self.delivery = delivery
        progress = RunProgress(meter: fetcher.meter)
    }

    /// Runs the batch, sending every event into `events` and finishing it.
    ///
    /// `reader` is made by the caller so a signal handler can cancel it.
    public func run(reader: URLListReader, into events: AsyncChannel<FetchEvent>) async {
        let settled = AsyncChannel<FetchEvent>()
        async let counted: Void = RunTally.forward(settled, to: events, progress: progress)
        var intake = RunIntake(
            fetcher: fetcher, shard: shard, progress: progress, reader: reader, output: settled, delivery: delivery,
            limit: max(16, fetcher.options.concurrency * 4))
        await withTaskGroup(of: FetchResult.self) { group in
            await intake.run(&group)
        }
        settled.finish()
        await counted
    }
}
