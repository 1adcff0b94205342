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
    private let meter: TransferMeter
    private let inputFinished = Atomic<Bool>(false)
    /// Meaningful input lines counted up front, or -1 while unknown (a pipe).
    private let expectedLines = Atomic<Int>(-1)
    /// Lines that end without a result of their own: duplicates and lines outside the shard.
    private let settledLines = Atomic<Int>(0)

    /// `meter`: where the run's requests count their body bytes (a fresh one counts none).
    public init(meter: TransferMeter = TransferMeter()) {
        self.meter = meter
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
        /// `failed`, `skipped` and `invalid`.
        public var failed: Int
        /// Body bytes received so far, counted as they arrive.
        public var bytes: Int64
        /// Declared bytes still to come of the transfers under way.
        public var pendingBytes: Int64
        /// The total is final: every input has been read.
        public var isTotalKnown: Bool
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
        return Snapshot(
            total: total, done: done,
            downloaded: downloaded.load(ordering: .relaxed), cached: cached.load(ordering: .relaxed),
            failed: failed.load(ordering: .relaxed), bytes: meter.arrivedBytes, pendingBytes: meter.pendingBytes,
            isTotalKnown: isTotalKnown)
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
        case .failed, .skipped, .invalid: failed.add(1, ordering: .relaxed)
        }
        done.add(1, ordering: .relaxed)
    }
}
