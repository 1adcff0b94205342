import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The network starter's bound (``FetchRun/fetchesPerSlot``): each fetch in flight holds its
/// task's frames, so the bound is what a list over many hosts costs in memory.
@Suite("Fetches in flight", .cleansUp, .timeLimit(.minutes(1)))
struct FetchesInFlightTests {
    let directory = TemporaryDirectory("in-flight")

    @Test("a run keeps twice -j fetches in flight while one host holds its URLs back, never more")
    func twiceTheSlots() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<60).map { "/slow\($0).png" }
        for (index, path) in paths.enumerated() {
            var response = ScriptedResponse.ok(SampleImages.png(seed: index))
            response.delay = .milliseconds(200)
            server.route(path, response)
        }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        // One host at `--per-host 6`: six requests at a time, the rest of the fetches wait.
        let fetcher = try Fetcher.forTesting(in: directory, now: Date.init) { $0.concurrency = 16 }
        let run = FetchRun(fetcher: fetcher, sources: [.file(list)])
        async let collected = CollectedRun.collect(run)
        var peak = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while run.progress.snapshot.done < paths.count, ContinuousClock.now < deadline {
            peak = max(peak, run.progress.snapshot.inFlight)
            try await Task.sleep(for: .milliseconds(5))
        }
        let results = await collected.results

        #expect(results.count == paths.count && results.allSatisfy { $0.status == .downloaded })
        #expect(peak == 2 * 16, "fetches in flight at most: \(peak)")
        #expect(server.totalRequests == paths.count && server.peakConcurrentRequests <= 6)
    }
}
