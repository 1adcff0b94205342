import SDFetchCore
import Synchronization
import Testing

/// What a test started that must be stopped when the test ends, however it ends (a failed
/// `#require`, a thrown error, a time limit): engines, fetchers, servers and temporary
/// directories register here as they are made, and the ``CleansUp`` trait stops or removes
/// them after the test body, newest first.
///
/// The scope is a task local, so whatever the test's task makes, in its body or in a helper
/// it calls, lands in the scope of that one test, also when tests run in parallel.
public final class TestScope: Sendable {
    @TaskLocal public static var current: TestScope?

    private let closers = Mutex<[@Sendable () async -> Void]>([])

    init() {}

    /// Runs `close` when the test ends. Outside a ``CleansUp`` scope that is a mistake in
    /// the test (its engine would never be shut down), so it stops the test run at once.
    public static func onExit(_ close: @escaping @Sendable () async -> Void) {
        guard let current else {
            preconditionFailure("made outside a test scope: give the suite the .cleansUp trait")
        }
        current.closers.withLock { $0.append(close) }
    }

    func closeAll() async {
        let closers = self.closers.withLock { closers in
            defer { closers = [] }
            return closers
        }
        for close in closers.reversed() { await close() }
    }
}
