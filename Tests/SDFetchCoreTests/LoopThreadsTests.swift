import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// An engine with two loop threads: `-j` holds across them, and a loop whose queue filled
/// first does not keep the other's hosts waiting (<doc:Fetching#Loop-threads>).
@Suite(
    "Loop threads", .cleansUp, .timeLimit(.minutes(1)),
    .enabled(if: ProcessInfo.processInfo.activeProcessorCount >= 2, "one loop on a single core"))
struct LoopThreadsTests {
    private static let maxTransfers = 16

    /// Servers until each of the two loops has `perLoop` of them; their loops' indexes.
    private func servers(perLoop: Int) async throws -> [[LoopbackServer]] {
        var byLoop: [[LoopbackServer]] = [[], []]
        for _ in 0..<64 where byLoop.contains(where: { $0.count < perLoop }) {
            let server = try await LoopbackServer()
            let loop = CurlEngine.loop(for: "127.0.0.1:\(server.port)", loops: 2)
            if byLoop[loop].count < perLoop { byLoop[loop].append(server) }
        }
        try #require(byLoop.allSatisfy { $0.count == perLoop })
        return byLoop
    }

    /// Most requests the servers received within any `window`: each was still being
    /// answered (held back `delay` > `window`) when the last of them arrived.
    private func peakReceived(_ servers: [LoopbackServer], within window: Duration) -> Int {
        let times = servers.flatMap { $0.recordedRequests.map(\.receivedAt) }.sorted()
        var peak = 0
        var start = 0
        for end in times.indices {
            while times[end] - times[start] >= window { start += 1 }
            peak = max(peak, end - start + 1)
        }
        return peak
    }

    private func perform(_ urls: [String], on engine: CurlEngine) async -> [TransferResponse] {
        await withTaskGroup(of: TransferResponse.self) { group in
            for url in urls { group.addTask { await engine.perform(TransferRequest(url: url)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("transfers in flight across both loops never exceed -j, and reach it")
    func lanesAreShared() async throws {
        let byLoop = try await servers(perLoop: 3)
        let all = byLoop.flatMap { $0 }
        var urls: [String] = []
        for (index, server) in all.enumerated() {
            for request in 0..<8 {
                let path = "/slow/\(index)-\(request).png"
                server.route(path, ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(400)))
                urls.append(server.url(path))
            }
        }
        let engine = CurlEngine.scoped(maxTransfers: Self.maxTransfers)
        try #require(engine.cores.count == 2)

        let responses = await perform(urls, on: engine)

        #expect(responses.count == 48)
        #expect(responses.allSatisfy { $0.failure == nil })
        #expect(all.reduce(0) { $0 + $1.totalRequests } == 48)
        #expect(peakReceived(all, within: .milliseconds(300)) == Self.maxTransfers)
    }

    @Test("a loop holding every lane gives the other loop's waiting host its share as transfers end")
    func waitingLoopGetsItsShare() async throws {
        let byLoop = try await servers(perLoop: 1)
        let (busy, other) = (byLoop[0][0], byLoop[1][0])
        let slow = ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(300))
        busy.route("/a.png", slow)
        other.route("/b.png", slow)
        let engine = CurlEngine.scoped(maxTransfers: Self.maxTransfers)

        async let busyResponses = perform(Array(repeating: busy.url("/a.png"), count: 48), on: engine)
        #expect(await busy.waitForRequests(Self.maxTransfers))
        let otherResponses = await perform(Array(repeating: other.url("/b.png"), count: 8), on: engine)
        let busyDone = await busyResponses

        #expect(otherResponses.allSatisfy { $0.failure == nil })
        #expect(busyDone.count == 48 && busyDone.allSatisfy { $0.failure == nil })
        // Over its share, the busy loop takes no lane while the other waits: the other
        // host's 8 start as the busy host's first 16 end, beside only 8 of the busy host's.
        // Had the busy loop taken back the lanes it freed, its 25th would have come first.
        let otherEnd = try #require(other.recordedRequests.map(\.receivedAt).max())
        let busyTimes = busy.recordedRequests.map(\.receivedAt).sorted()
        #expect(otherEnd < busyTimes[24])
    }
}
