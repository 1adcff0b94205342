import Synchronization

/// Live counters of a run, read by a progress display at its own pace.
///
/// Lock-free so the fetch path never waits for the display.
public final class RunProgress: Sendable {
    private let unique = Atomic<Int>(0)
    private let done = Atomic<Int>(0)
    private let downloaded = Atomic<Int>(0)
    private let cached = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    private let inputFinished = Atomic<Bool>(false)

    public init() {}

    public struct Snapshot: Sendable, Equatable {
        /// Unique URLs (and invalid lines) seen so far.
        public var total: Int
        public var done: Int
        public var downloaded: Int
        /// `cached` and `revalidated`.
        public var cached: Int
        /// `failed`, `skipped` and `invalid`.
        public var failed: Int
        public var bytes: Int64
        /// The total is final: every input has been read.
        public var isTotalKnown: Bool
    }

    public var snapshot: Snapshot {
        Snapshot(
            total: unique.load(ordering: .relaxed), done: done.load(ordering: .relaxed),
            downloaded: downloaded.load(ordering: .relaxed), cached: cached.load(ordering: .relaxed),
            failed: failed.load(ordering: .relaxed), bytes: Int64(bytes.load(ordering: .relaxed)),
            isTotalKnown: inputFinished.load(ordering: .relaxed))
    }

    func discovered() { unique.add(1, ordering: .relaxed) }

    func inputDidFinish() { inputFinished.store(true, ordering: .relaxed) }

    func completed(_ result: FetchResult) {
        switch result.status {
        case .downloaded:
            downloaded.add(1, ordering: .relaxed)
            bytes.add(Int(result.bytes), ordering: .relaxed)
        case .cached, .revalidated: cached.add(1, ordering: .relaxed)
        case .failed, .skipped, .invalid: failed.add(1, ordering: .relaxed)
        }
        done.add(1, ordering: .relaxed)
    }
}
