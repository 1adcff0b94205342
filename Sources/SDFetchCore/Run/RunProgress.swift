import Synchronization

/// Live counters of a run, read by a progress display at its own pace.
///
/// Lock-free so the fetch path never waits for the display. Bytes come from the fetcher's
/// ``TransferMeter`` as they arrive, so the count moves during a long transfer, not only
/// when an image is done.
public final class RunProgress: Sendable {
    private let unique = Atomic<Int>(0)
    private let done = Atomic<Int>(0)
    private let downloaded = Atomic<Int>(0)
    private let cached = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let skipped = Atomic<Int>(0)
    private let invalid = Atomic<Int>(0)
    /// Keys looked up in the cache so far, and those of them that went on to the network:
    /// their ratio is the share of the URLs still to come that will download.
    private let lookedUp = Atomic<Int>(0)
    private let networkStarted = Atomic<Int>(0)
    /// URLs on the network now (a request under way, a retry's backoff, a per-host queue).
    private let inFlight = Atomic<Int>(0)
    private let meter: TransferMeter
    private let inputFinished = Atomic<Bool>(false)
    /// Meaningful input lines counted up front, or -1 while unknown (a pipe).
    private let expectedLines = Atomic<Int>(-1)
    /// Lines that end without a result of their own: duplicates and lines outside the shard.
    private let settledLines = Atomic<Int>(0)

    /// What `meter` had counted before this run (a fetcher may serve several runs).
    private let meterStart: (bytes: Int64, requests: Int)

    /// `meter`: where the run's requests count their body bytes (a fresh one counts none).
    public init(meter: TransferMeter = TransferMeter()) {
        self.meter = meter
        meterStart = (meter.arrivedBytes, meter.requestsSent)
    }

    /// Body bytes received and HTTP requests sent by this run so far, whatever became of
    /// them (an interrupted or failed transfer's bytes count too).
    var sentAndReceived: (requests: Int, bytes: Int64) {
        (meter.requestsSent - meterStart.requests, meter.arrivedBytes - meterStart.bytes)
    }

    /// What the bar counts: unique URLs and invalid lines while the input's size is unknown;
    /// input lines (each duplicate done when read) once it was counted up front, so the
    /// total is true from the first redraw.
    public struct Snapshot: Sendable, Equatable {
        public var total: Int
        public var done: Int
        public var downloaded: Int
        /// `cached` and `revalidated`.
        public var cached: Int
        /// `failed` alone: `skipped` and `invalid` are counted apart.
        public var failed: Int
        /// Body bytes received so far, counted as they arrive.
        public var bytes: Int64
        /// Declared bytes still to come of the transfers under way.
        public var pendingBytes: Int64
        /// The total is final: every input has been read.
        public var isTotalKnown: Bool
        public var skipped = 0
        public var invalid = 0
        /// URLs on the network now.
        public var inFlight = 0
        /// Of the keys looked up so far, how many went on to the network.
        public var lookedUp = 0
        public var networkStarted = 0
        /// Bodies started so far and their bytes (declared, or received once ended).
        public var bodies = 0
        public var bodyBytes: Int64 = 0
        /// Bodies arriving now.
        public var bodiesUnderWay = 0
        /// Transfers waiting for a response, and the time until the last of them is given
        /// up at the latest (its timeout).
        public var awaitingResponses = 0
        public var longestWait: Duration?

        public init(
            total: Int, done: Int, downloaded: Int, cached: Int, failed: Int, bytes: Int64, pendingBytes: Int64,
            isTotalKnown: Bool
        ) {
            self.total = total
            self.done = done
            self.downloaded = downloaded
            self.cached = cached
            self.failed = failed
            self.bytes = bytes
            self.pendingBytes = pendingBytes
            self.isTotalKnown = isTotalKnown
        }
    }

    public var snapshot: Snapshot {
        var total = unique.load(ordering: .relaxed)
        var done = done.load(ordering: .relaxed)
        var isTotalKnown = inputFinished.load(ordering: .relaxed)
        let expected = expectedLines.load(ordering: .relaxed)
        if expected >= 0 {
            done += settledLines.load(ordering: .relaxed)
            // A file that grew while read must not show more done than total.
            total = max(expected, done)
            isTotalKnown = true
        }
        var snapshot = Snapshot(
            total: total, done: done,
            downloaded: downloaded.load(ordering: .relaxed), cached: cached.load(ordering: .relaxed),
            failed: failed.load(ordering: .relaxed), bytes: meter.arrivedBytes - meterStart.bytes,
            pendingBytes: meter.pendingBytes, isTotalKnown: isTotalKnown)
        snapshot.skipped = skipped.load(ordering: .relaxed)
        snapshot.invalid = invalid.load(ordering: .relaxed)
        snapshot.inFlight = inFlight.load(ordering: .relaxed)
        snapshot.lookedUp = lookedUp.load(ordering: .relaxed)
        snapshot.networkStarted = networkStarted.load(ordering: .relaxed)
        (snapshot.bodies, snapshot.bodyBytes) = meter.bodiesAndBytes
        snapshot.bodiesUnderWay = meter.bodiesUnderWay
        (snapshot.awaitingResponses, snapshot.longestWait) = meter.awaitingResponses
        return snapshot
    }

    /// Meaningful input lines that no result and no count accounts for, given the `reported`
    /// URLs (results, interrupted ones included): what a run stopped by Ctrl-C did not reach,
    /// whether its intake never read them or had not started them. A line is reported, or
    /// ``settledWithoutResult()`` (a duplicate, outside the shard), or neither. Nil when the
    /// input's length is unknown (a pipe).
    public func linesNotReached(reported: Int) -> Int? {
        let expected = expectedLines.load(ordering: .relaxed)
        guard expected >= 0 else { return nil }
        return max(0, expected - reported - settledLines.load(ordering: .relaxed))
    }

    /// The input was counted up front: `lines` meaningful lines in all.
    func expect(lines: Int) { expectedLines.store(lines, ordering: .relaxed) }

    /// A line ended without a result (a duplicate, or outside the shard).
    func settledWithoutResult() { settledLines.add(1, ordering: .relaxed) }

    func discovered() { unique.add(1, ordering: .relaxed) }

    func inputDidFinish() { inputFinished.store(true, ordering: .relaxed) }

    func completed(_ result: FetchResult) {
        switch result.status {
        case .downloaded: downloaded.add(1, ordering: .relaxed)
        case .cached, .revalidated: cached.add(1, ordering: .relaxed)
        case .failed: failed.add(1, ordering: .relaxed)
        case .skipped: skipped.add(1, ordering: .relaxed)
        case .invalid: invalid.add(1, ordering: .relaxed)
        }
        done.add(1, ordering: .relaxed)
    }

    /// `count` keys were looked up in the cache.
    func lookedUp(_ count: Int) { lookedUp.add(count, ordering: .relaxed) }

    /// A key's network steps start.
    func networkDidStart() {
        networkStarted.add(1, ordering: .relaxed)
        inFlight.add(1, ordering: .relaxed)
    }

    /// A key's network steps ended (its result is about to be published).
    func networkDidEnd() { inFlight.subtract(1, ordering: .relaxed) }
}
