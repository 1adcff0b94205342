/// A whole batch: read inputs, de-duplicate, fetch, report (the CLI's main job).
///
/// Four tasks and one meeting point (see <doc:Pipeline>):
/// - the intake (``RunIntake``, a child task) reads lines, identifies and de-duplicates
///   keys, looks each up in the cache (warm hits are answered inline, without a task) and
///   queues the rest for the network;
/// - the network starter (`NetworkStarter`, the intake's child task) takes the queue in
///   order and starts each URL's network steps as a child task of its group, at most
///   ``fetchesPerSlot`` per slot of `-j`;
/// - the scout (`HostScout`, also the intake's child) reads a file input on past the
///   queue for host names alone, so new hosts are probed ahead of their turn;
/// - every result, after its last step (``delivery``: the CLI's `-o`, which alone may
///   still change a status), is published to the run's ``RunLedger`` by whoever made it,
///   and counted there, once, for the bar (``progress``) and the summary;
/// - the caller's task takes the ledger's events and hands them to `handle`.
///
/// Each key is fetched once per run however often it appears; later occurrences raise the
/// key's `duplicates` and the summary's total. A result carries the count known when it is
/// reported; ``FetchEvent/inputFinished(duplicates:)`` gives every key's final count, so a
/// consumer that needs it exact whatever the timing (JSON) can wait for it.
/// At most a few times `concurrency` URLs are in flight and about a thousand results wait for
/// the consumer, so the reader waits when the run is full and a list of any length runs in
/// bounded memory (the seen-set holds one 16-byte digest per unique key; it is handed to
/// the summary as ``RunSummary/usedKeys`` at the end).
public struct FetchRun: Sendable {
    public let fetcher: Fetcher
    public let sources: [InputSource]
    /// Only keys in this shard are processed (`--shard K/N`).
    public var shard: Shard?
    /// The last step of each result before it is counted; nil: none.
    public var delivery: (any ResultDelivery)?
    public let progress: RunProgress
    /// Fetches in flight per slot of `-j`: the engine needs more than `-j` to choose from
    /// (a host at its `--per-host` limit, a slow or paused host hold theirs), but each costs
    /// its task's frames, about 24 KB: four per slot held 25 MB on a list over 4,000 hosts
    /// and were no faster than two; one per slot took 1.7 times as long
    /// (`Scripts/bench.d/README.md`, "Memory over many hosts").
    static let fetchesPerSlot = 2

    public init(fetcher: Fetcher, sources: [InputSource], shard: Shard? = nil, delivery: (any ResultDelivery)? = nil) {
        self.fetcher = fetcher
        self.sources = sources
        self.shard = shard
        self.delivery = delivery
        progress = RunProgress(meter: fetcher.meter)
    }

    /// Runs the batch, calling `handle` with every event, in order, on the caller's task;
    /// returns after `finished`. The run waits while `handle` does, so a consumer that
    /// cannot keep up (a blocked stdout) holds the input back, not memory.
    ///
    /// `reader` is made by the caller so a signal handler can cancel it.
    public func run(
        reader: URLListReader, isolation: isolated (any Actor)? = #isolation, _ handle: (FetchEvent) async -> Void
    ) async {
        let ledger = RunLedger(progress: progress)
        let intake = RunIntake(
            fetcher: fetcher, shard: shard, reader: reader, ledger: ledger, delivery: delivery,
            limit: max(16, fetcher.options.concurrency * Self.fetchesPerSlot))
        async let intakeDone: Void = RunIntake.run(intake)
        while let events = await ledger.next() {
            for event in events { await handle(event) }
        }
        await intakeDone
    }
}

extension FetchRun {
    /// ``run(reader:isolation:_:)`` over ``sources``, read by a reader of its own: for a
    /// caller that never needs to cancel the reading (a signal handler would).
    public func run(isolation: isolated (any Actor)? = #isolation, _ handle: (FetchEvent) async -> Void) async {
        await run(reader: URLListReader(sources: sources), handle)
    }
}
