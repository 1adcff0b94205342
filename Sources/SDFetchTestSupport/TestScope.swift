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

/// A suite or test trait that gives each test a ``TestScope`` and closes it after the test,
/// whether the body returned or threw.
public struct CleansUp: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's own scope would hold nothing: its tests get one each.
        guard !test.isSuite else { return try await function() }
        let scope = TestScope()
        do {
            try await TestScope.$current.withValue(scope) { try await function() }
        } catch {
            await scope.closeAll()
            throw error
        }
        await scope.closeAll()
    }
}

extension Trait where Self == CleansUp {
    /// Shut down every engine, fetcher and server a test made, and remove its temporary
    /// directories, when it ends (``TestScope``).
    public static var cleansUp: Self { CleansUp() }
}

extension CurlEngine {
    /// An engine shut down when the current test ends (see ``TestScope``).
    public static func scoped(maxTransfers: Int, pacing: TransferPacing = TransferPacing()) -> CurlEngine {
        let engine = CurlEngine(maxTransfers: maxTransfers, pacing: pacing)
        TestScope.onExit { await engine.shutdown() }
        return engine
    }
}
