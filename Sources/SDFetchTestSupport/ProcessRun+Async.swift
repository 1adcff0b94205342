import Foundation

extension ProcessRun {
    /// ``run(_:_:input:environment:)`` on a thread of its own, awaited without blocking.
    ///
    /// The synchronous version waits for the child on the calling thread; from an async
    /// test that parks one of the few cooperative threads (two on a 2-core machine) for the
    /// child's whole life, starving other suites' tasks running in parallel, such as one
    /// that polls a child's progress to kill it mid-run.
    public static func launch(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result { try run(executable, arguments, input: input, environment: environment) })
            }
            thread.name = "ProcessRun"
            thread.start()
        }
    }
}

extension Process {
    /// `waitUntilExit()` on a thread of its own, awaited without parking a cooperative thread
    /// (see ``ProcessRun/launch(_:_:input:environment:)``).
    public func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                self.waitUntilExit()
                continuation.resume()
            }
            thread.name = "Process.exited"
            thread.start()
        }
    }
}
