import Foundation
import SDFetchTestSupport
import Testing

/// `crawler | sdfetch`: lines are fetched as they arrive, not when a batch fills or the input ends.
@Suite("streamed input from a slow producer", .timeLimit(.minutes(1)))
struct StreamingInputTests {
    let directory = TemporaryDirectory("stream")

    /// Polls `condition` every 20 ms until it holds or `deadline` passes; true when it held.
    private func eventually(until deadline: ContinuousClock.Instant, _ condition: () -> Bool) async -> Bool {
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("the first URL is requested and reported before the producer writes the second")
    func pausingProducer() async throws {
        defer { directory.remove() }
        let server = try await LoopbackServer()
        server.route("/first.png", .ok(SampleImages.png(seed: 1)))
        server.route("/second.png", .ok(SampleImages.png(seed: 2)))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache"), "-"]
        process.environment = ["HOME": directory.path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let collected = OutputCollector(output.fileHandleForReading)

        try input.fileHandleForWriting.write(contentsOf: Data((server.url("/first.png") + "\n").utf8))
        let requested = await eventually(until: .now + .seconds(10)) { server.requests(for: "/first.png") == 1 }
        let reported = await eventually(until: .now + .seconds(10)) { collected.text.contains("first.png") }
        let secondBefore = server.requests(for: "/second.png")
        try input.fileHandleForWriting.write(contentsOf: Data((server.url("/second.png") + "\n").utf8))
        try input.fileHandleForWriting.close()
        await process.exited()
        let finalText = collected.wait()
        try await server.shutdown()

        #expect(requested, "the first line waited for more input")
        #expect(reported, "the first result waited for more input")
        #expect(secondBefore == 0)
        #expect(process.terminationStatus == 0)
        #expect(finalText.split(separator: "\n").map { $0.prefix(10) } == ["downloaded", "downloaded"])
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
                let chunk = handle.availableData
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
