import Foundation
import SDFetchTestSupport

/// The built `sdfetch` with a pipe for standard input that the test writes as it goes (a
/// slow producer, `crawler | sdfetch`), standard output collected while it runs and
/// standard error discarded.
struct PipedRun {
    let process: Process
    let input: FileHandle
    let output: OutputCollector

    /// Starts `sdfetch arguments` with `HOME` set to `home` and nothing else inherited.
    static func start(_ arguments: [String], home: String) throws -> PipedRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = arguments
        process.environment = ChildEnvironment.with(["HOME": home])
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return PipedRun(
            process: process, input: input.fileHandleForWriting, output: OutputCollector(output.fileHandleForReading))
    }

    func write(_ text: String) throws {
        guard PipeIO.write(text.utf8, to: input) else { throw POSIXError(.EPIPE) }
    }

    /// Closes standard input, waits for the process to exit, and returns all it printed.
    func finish() async throws -> String {
        try input.close()
        await process.exited()
        return output.wait()
    }
}

/// Collects a pipe's text on a thread of its own, readable while the writer still runs.
final class OutputCollector: @unchecked Sendable {
    /// Guards `data` and `isDone`.
    private let lock = NSCondition()
    private var data = Data()
    private var isDone = false

    init(_ handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = PipeIO.chunk(handle)
                lock.lock()
                if chunk.isEmpty {
                    isDone = true
                    lock.broadcast()
                    lock.unlock()
                    return
                }
                data.append(chunk)
                lock.unlock()
            }
        }.start()
    }

    /// What arrived so far.
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Everything, once the writer closed the pipe.
    func wait() -> String {
        lock.lock()
        defer { lock.unlock() }
        while !isDone { lock.wait() }
        return String(decoding: data, as: UTF8.self)
    }
}
