/// One step of `clean`, as `clean --json` reports it: which, how many files it removed (or
/// would, in a dry run) and how long it took, so a slow clean says where its time went.
public struct CleanStep: Sendable, Equatable {
    /// `temporaries`, `buckets` (expiry, strays and compaction), `trim`, `content`,
    /// `failed` or `hosts`, in the order they run.
    public let name: String
    public let removed: Int
    public let seconds: Double

    /// Alike when they removed the same: a dry run's report equals the real run's.
    public static func == (lhs: CleanStep, rhs: CleanStep) -> Bool {
        lhs.name == rhs.name && lhs.removed == rhs.removed
    }
}

/// The steps of one `clean`, timed as they run.
struct CleanSteps {
    private(set) var done: [CleanStep] = []

    /// Runs `body`, which returns how many files it removed, and records it as step `name`.
    @discardableResult
    mutating func run<E: Error>(_ name: String, _ body: () throws(E) -> Int) throws(E) -> Int {
        let start = MonotonicTime.nanoseconds()
        let removed = try body()
        done.append(CleanStep(name: name, removed: removed, seconds: Double(MonotonicTime.nanoseconds() - start) / 1e9))
        return removed
    }
}
