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

extension Process {
    /// Kills a server a test started (SIGKILL) and waits, without parking a cooperative
    /// thread, until the kernel shows it gone or a zombie, for 5 s at most.
    /// Not `waitUntilExit()`: called from the pool by several tests at once, Foundation's wait
    /// spun both cooperative threads forever and the test run never ended.
    public func kill() async {
        let pid = processIdentifier
        _ = Glibc.kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.isAlive(pid), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// The state letter of `/proc/PID/stat` (after the command name's closing parenthesis)
    /// is neither Z nor X.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let state = stat[stat.index(after: close)...].split(separator: " ").first
        else { return false }
        return state != "Z" && state != "X"
    }
}
