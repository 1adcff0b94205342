import Dispatch
import Foundation
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

@testable import sdfetch

/// The console writes on a thread of its own (SDFetchCore.docc, Pipeline, "Where threads
/// are"): a standard output nobody reads blocks that thread, never the callers on the
/// cooperative pool, and lines still come out in the order they were queued.
@Suite("console writes off the cooperative pool", .timeLimit(.minutes(1)))
struct ConsoleWriterTests {
    @Test("result lines queued for a pipe nobody reads leave the cooperative pool free, and arrive in order")
    func blockedOutputDoesNotParkThePool() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(discard) }
        // The pipe's only reader: it starts when the test says so or, should the callers park
        // the pool (the regression this test is for), after 45 s (a loaded ThreadSanitizer run
        // takes seconds here), so the test fails instead of hanging.
        let reader = PipeReader(readEnd)
        let writers = ProcessInfo.processInfo.activeProcessorCount + 2
        let linesEach = 100  // 100 KiB a writer: past the pipe's 64 KiB, which the first hand-over fills
        let returned = Returned()

        await withConsole(environment: .detached(), output: writeEnd, error: discard) { console in
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for line in 0..<linesEach { console.output(Self.line(writer: writer, number: line)) }
                        returned.value.add(1, ordering: .relaxed)
                    }
                }
                await group.waitForAll()
            }
            // Every caller returned although nothing has read the pipe yet, and other work runs.
            let answer = await Task.detached { 42 }.value
            #expect(answer == 42)
            #expect(returned.value.load(ordering: .relaxed) == writers)
            #expect(!reader.hasStartedByItself, "the callers waited for the pipe's watchdog")
            reader.start()
        }
        close(writeEnd)  // the console has written everything and joined its writer: end of file
        let text = String(decoding: reader.wait(), as: UTF8.self)
        close(readEnd)

        let lines = text.split(separator: "\n")
        #expect(lines.count == writers * linesEach)
        for writer in 0..<writers {
            let own = lines.filter { $0.hasPrefix("w\(writer) ") }
            #expect(own.map { Int($0.split(separator: " ")[1])! } == Array(0..<linesEach), "writer \(writer)'s order")
        }
    }

    @Test("results sent to the bar's own stream (-o -) erase the bar, then it is drawn again below them")
    func resultsOnTheBarsStream() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        var environment = ProcessEnvironment.detached(["TERM": "xterm"])
        environment.isStandardErrorTerminal = true  // standard output is not: the bar's state must come from stderr
        await withConsole(environment: environment, output: ends[1], error: ends[1]) { console in
            console.showBar("[bar]")
            console.output("downloaded\t-\thttp://h/a.png\n")
        }
        close(ends[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = read(ends[0], &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
        close(ends[0])
        let text = String(decoding: bytes, as: UTF8.self)
        let expected = "\r[bar]\u{1B}[K" + "\r\u{1B}[K" + "downloaded\t-\thttp://h/a.png\n" + "\r[bar]\u{1B}[K"
        #expect(text == expected, "\(text.debugDescription)")
    }

    /// About 1 KiB: `w<writer> <number> xxx…`.
    private static func line(writer: Int, number: Int) -> String {
        "w\(writer) \(number) " + String(repeating: "x", count: 1000) + "\n"
    }
}

private final class Returned: Sendable {
    let value = Atomic<Int>(0)
}

/// Reads a pipe to its end on a thread of its own, once told to, or by itself after 45 s.
private final class PipeReader: Sendable {
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex<[UInt8]>([])
    private let startedByItself = Atomic<Bool>(false)

    init(_ fd: Int32) {
        Thread { [self] in
            if go.wait(timeout: .now() + 45) == .timedOut { startedByItself.store(true, ordering: .relaxed) }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                data.withLock { $0 += buffer[..<count] }
            }
            done.signal()
        }.start()
    }

    var hasStartedByItself: Bool { startedByItself.load(ordering: .relaxed) }

    func start() { go.signal() }

    /// Everything read, once the writing end is closed.
    func wait() -> [UInt8] {
        done.wait()
        return data.withLock { $0 }
    }
}
