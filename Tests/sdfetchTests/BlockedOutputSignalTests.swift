import Foundation
import SDFetchTestSupport
import Testing

/// `sdfetch urls | less`: Ctrl-C works even while a write to standard output is blocked,
/// during the run and after it, while its last lines still wait for a reader.
///
/// The signals are sent, and the exit timed, on a thread of the test's own (``onOwnThread``):
/// other suites run beside this one.
@Suite("signals with a blocked standard output", .timeLimit(.minutes(1)), .cleansUp)
struct BlockedOutputSignalTests {
    let directory = TemporaryDirectory("sig")

    /// Starts sdfetch on a list of invalid lines (instant results, 100 KB+ of output) with
    /// stdout a pipe nobody reads, and returns once the pipe is full.
    /// `shortGrace`: the first signal's drain is given 0.2 s, not 1 (the debug build's ShortWaits).
    private func blockedRun(_ extraArguments: [String] = [], shortGrace: Bool = true) async throws -> (Process, Pipe) {
        let lines = (0..<4000).map { "not-a-url-\($0)-" + String(repeating: "x", count: 60) }
        let list = directory.write(lines.joined(separator: "\n"), to: "l")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache")] + extraArguments + [list]
        let shortWaits = shortGrace ? ["SDFETCH_TEST_SHORT_WAITS": "1"] : [:]
        process.environment = ChildEnvironment.with(["HOME": directory.path].merging(shortWaits) { $1 })
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
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

    /// Blocks until process `pid` has ended (a zombie, or reaped) or `limit` has passed;
    /// returns how long that took. Read from `/proc`, whoever reaps the child.
    private static func waitForExit(_ pid: Int32, within limit: Duration) -> Duration {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit, Process.isAlive(pid) { usleep(1000) }
        return ContinuousClock.now - start
    }

    /// Sends SIGINT and times the exit, on a thread of the test's own; kills the process
    /// if it is still running after 10 s.
    private func interrupt(_ process: Process) async -> Duration {
        let pid = process.processIdentifier
        let waited = await onOwnThread {
            kill(pid, SIGINT)
            return Self.waitForExit(pid, within: .seconds(10))
        }
        if process.isRunning { kill(pid, SIGKILL) }
        await process.exited()
        return waited
    }

    @Test("one SIGINT exits 130 within 2 s although stdout is a full pipe")
    func firstSignalExits() async throws {
        let (process, output) = try await blockedRun()
        let waited = await interrupt(process)
        _ = output

        #expect(waited < .seconds(2), "took \(waited)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
    }

    @Test("a SIGINT after the run, while its last output waits for a reader, still exits 130 within 2 s")
    func signalAfterTheRun() async throws {
        // --summary is written after the run's events, its summary line and the cache trim:
        // the file's arrival says the run is over and only the queued output is left.
        let summary = directory.appending("summary.json")
        let (process, output) = try await blockedRun(["--summary", summary])
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: summary), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(FileManager.default.fileExists(atPath: summary), "the run never finished")
        let waited = await interrupt(process)
        _ = output

        #expect(waited < .seconds(2), "took \(waited)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
    }

    @Test("a second SIGINT ends the process at once")
    func secondSignalKills() async throws {
        let (process, output) = try await blockedRun(shortGrace: false)
        let pid = process.processIdentifier
        let path = stderrPath
        // The second signal must find the first one handled (its notice is the evidence), and
        // come before the first one's 1 s deadline ends the process anyway.
        let (noticed, waited) = await onOwnThread { () -> (Bool, Duration) in
            kill(pid, SIGINT)
            let deadline = ContinuousClock.now + .seconds(5)
            var noticed = false
            while !noticed, ContinuousClock.now < deadline {
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                noticed = text.contains("interrupted, finishing")
                if !noticed { usleep(1000) }
            }
            kill(pid, SIGINT)
            return (noticed, Self.waitForExit(pid, within: .seconds(10)))
        }
        if process.isRunning { kill(pid, SIGKILL) }
        await process.exited()
        _ = output

        #expect(noticed)
        #expect(waited < .milliseconds(1000), "took \(waited)")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
    }
}
