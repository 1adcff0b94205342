import Foundation
import Synchronization

/// Runs a program to completion and captures what it wrote.
public struct ProcessRun: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
    /// Standard output as written: an image streamed by `-o -` is no UTF-8 text.
    public var standardOutputBytes = Data()

    /// A child still running after this long is killed: a hung run then fails its test (a
    /// suite's time limit does not stop a thread waiting for a child) instead of holding the
    /// whole test job until CI gives up.
    public static let hardLimit: TimeInterval = 120

    /// Runs `executable` with `arguments`, feeding `input` on stdin (empty stdin otherwise);
    /// `environment`, when given, replaces the inherited one (see ``ChildEnvironment``).
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) throws -> ProcessRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = ChildEnvironment.with(environment) }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let exited = ExitMark()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + hardLimit) {
            exited.value.withLock { if !$0 { kill(pid, SIGKILL) } }
        }
        defer { exited.value.withLock { $0 = true } }
        // A child may exit before reading its input: EPIPE is then expected, not an error.
        PipeIO.write(input.utf8, to: stdin.fileHandleForWriting)
        try? stdin.fileHandleForWriting.close()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let errorData = ErrorDrain(stderr.fileHandleForReading)
        let outData = PipeIO.all(stdout.fileHandleForReading)
        process.waitUntilExit()
        return ProcessRun(
            status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
            standardError: String(decoding: errorData.wait(), as: UTF8.self), standardOutputBytes: outData)
    }
}

/// Set once the child was reaped, so the hard limit never signals a reused process ID.
private final class ExitMark: Sendable {
    let value = Mutex(false)
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorDrain: @unchecked Sendable {
    /// Guards `data`; `done` is signalled once it is complete.
    private let lock = NSCondition()
    private var data = Data()
    private var done = false

    init(_ handle: FileHandle) {
        Thread { [self] in
            let all = PipeIO.all(handle)
            lock.lock()
            data = all
            done = true
            lock.signal()
            lock.unlock()
        }.start()
    }

    func wait() -> Data {
        lock.lock()
        defer { lock.unlock() }
        while !done { lock.wait() }
        return data
    }
}
