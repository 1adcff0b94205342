import Foundation

/// Runs a program and reports its own peak resident memory, for memory-bound tests.
///
/// The kernel carries `ru_maxrss` across `exec`, and `posix_spawn` (which `Process` uses)
/// starts the child in the test runner's address space: its peak would be the runner's.
/// So a small Python parent forks (a real fork of a small process), execs the program and
/// reports `ru_maxrss` from `wait4` on that child alone.
public struct PeakMemoryRun: Sendable {
    public var run: ProcessRun
    /// Peak resident set in KiB, as the kernel counts it for the measured process.
    public var peakKiB: Int

    private static let parent = """
        import os, sys
        report, argv = sys.argv[1], sys.argv[2:]
        pid = os.fork()
        if pid == 0:
            try:
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        with open(report, "w") as out:
            out.write(str(usage.ru_maxrss))
        sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
        """

    /// Runs `executable` with `arguments` (stdin empty) and waits without parking a
    /// cooperative thread; `report` is a scratch file for the measured number.
    public static func launch(
        _ executable: String, _ arguments: [String], report: String
    ) async throws
        -> PeakMemoryRun
    {
        let run = try await ProcessRun.launch(
            "/usr/bin/env", ["python3", "-c", parent, report, executable] + arguments)
        let text = try String(contentsOfFile: report, encoding: .utf8)
        guard let peak = Int(text) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no peak in \(report)"])
        }
        return PeakMemoryRun(run: run, peakKiB: peak)
    }
}
