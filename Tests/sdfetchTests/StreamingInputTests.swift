import Foundation
import SDFetchTestSupport
import Testing

/// `crawler | sdfetch`: lines are fetched as they arrive, not when a batch fills or the input ends.
@Suite("streamed input from a slow producer", .cleansUp, .timeLimit(.minutes(1)))
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
        let server = try await LoopbackServer()
        server.route("/first.png", .ok(SampleImages.png(seed: 1)))
        server.route("/second.png", .ok(SampleImages.png(seed: 2)))
        let run = try PipedRun.start(["--cache-dir", directory.appending("cache"), "-"], home: directory.path)

        try run.write(server.url("/first.png") + "\n")
        let requested = await eventually(until: .now + .seconds(10)) { server.requests(for: "/first.png") == 1 }
        let reported = await eventually(until: .now + .seconds(10)) { run.output.text.contains("first.png") }
        let secondBefore = server.requests(for: "/second.png")
        try run.write(server.url("/second.png") + "\n")
        let finalText = try await run.finish()

        #expect(requested, "the first line waited for more input")
        #expect(reported, "the first result waited for more input")
        #expect(secondBefore == 0)
        #expect(run.process.terminationStatus == 0)
        #expect(finalText.split(separator: "\n").map { $0.prefix(10) } == ["downloaded", "downloaded"])
    }
}
