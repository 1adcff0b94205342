import Testing

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
