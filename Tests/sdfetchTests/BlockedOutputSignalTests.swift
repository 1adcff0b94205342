import Foundation
import SDFetchTestSupport
import Testing

/// `sdfetch urls | less`: Ctrl-C works even while a write to standard output is blocked.
@Suite("signals with a blocked standard output", .timeLimit(.minutes(1)), .cleansUp)
struct BlockedOutputSignalTests {
    let directory = TemporaryDirectory("sig")

    /// Starts sdfetch on a list of invalid lines (instant results, 100 KB+ of output) with
    /// stdout a pipe nobody reads, and returns once the pipe is full.
    private func blockedRun() async throws -> (Process, Pipe) {
        let lines = (0..<4000).map { "not-a-url-\($0)-" + String(repeating: "x", count: 60) }
        let list = directory.write(lines.joined(separator: "\n"), to: "l")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache"), list]
        process.environment = ChildEnvironment.with(["HOME": directory.path])
        let output = Pipe()
        process.standardOutput = output
        try Data().write(to: URL(fileURLWithPath: stderrPath))
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        var queued: Int32 = 0
        while ContinuousClock.now < deadline {
            _ = ioctl(output.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &queued)
            // Pipe capacity is counted in pages, so a full pipe may hold a little under 64 KiB.
            if queued >= 32768 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(queued >= 32768, "the output pipe never filled")
        // The state the tests are about: a thread of sdfetch parked in write(1) on the pipe.
        while !Self.isParkedInPipeWrite(process.processIdentifier), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(Self.isParkedInPipeWrite(process.processIdentifier), "no thread ever blocked writing stdout")
        return (process, output)
    }

    /// Whether a thread of `pid` sleeps in the kernel's pipe write (`/proc/PID/task/*/wchan`:
    /// `pipe_write`, or `anon_pipe_write` on newer kernels).
    private static func isParkedInPipeWrite(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? ""
            return wchan.hasSuffix("pipe_write")
        }
    }

    private var stderrPath: String { directory.appending("stderr.txt") }

    private func waitForExit(_ process: Process, within limit: Duration) async -> Duration {
        let start = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - start < limit { try? await Task.sleep(for: .milliseconds(10)) }
        return ContinuousClock.now - start
    }

    @Test("one SIGINT exits 130 within 2 s although stdout is a full pipe")
    func firstSignalExits() async throws {
        let (process, output) = try await blockedRun()
        kill(process.processIdentifier, SIGINT)
        let waited = await waitForExit(process, within: .seconds(10))
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await process.exited()
        _ = output

        #expect(waited < .seconds(2), "took \(waited)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
    }

    @Test("a second SIGINT ends the process at once")
    func secondSignalKills() async throws {
        let (process, output) = try await blockedRun()
        kill(process.processIdentifier, SIGINT)
        // The second signal must find the first one handled: its notice is the evidence.
        let noticed = ContinuousClock.now + .seconds(5)
        while !((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "").contains("interrupted, finishing"),
            ContinuousClock.now < noticed
        {
            try await Task.sleep(for: .milliseconds(5))
        }
        kill(process.processIdentifier, SIGINT)
        let waited = await waitForExit(process, within: .seconds(10))
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await process.exited()
        _ = output

        #expect(waited < .milliseconds(1000), "took \(waited)")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
    }
}
