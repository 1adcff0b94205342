import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--per-host`, `--wait` and `--limit-rate` as the servers see them: the engine's loop
/// holds requests and pauses transfers, and these tests measure the result on the wire.
@Suite("Pacing", .cleansUp, .timeLimit(.minutes(1)))
struct PacingTests {
    let directory = TemporaryDirectory("pacing")

    private func fetcher(_ configure: (inout FetchOptions) -> Void) throws -> Fetcher {
        try Fetcher.forTesting(in: directory, configure)
    }

    /// Routes `/INDEX.png` on `server` for each index (seed `seeds + INDEX`) and returns the URLs.
    private func images(
        on server: LoopbackServer, _ indices: Range<Int>, seeds: Int = 0, delay: Duration = .zero
    ) -> [String] {
        indices.map { index in
            server.route("/\(index).png", ScriptedResponse(body: SampleImages.png(seed: seeds + index), delay: delay))
            return server.url("/\(index).png")
        }
    }

    /// A whole run over `lines` with the fetcher `configure` makes.
    private func run(_ lines: [String], _ configure: (inout FetchOptions) -> Void) async throws -> CollectedRun {
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        return await CollectedRun.collect(FetchRun(fetcher: try fetcher(configure), sources: [.file(list)]))
    }

    @Test("--per-host caps transfers in flight to each host while -j allows more")
    func perHostCapsEachHost() async throws {
        let first = try await LoopbackServer()
        let second = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<8 {
            for server in [first, second] {
                server.route(
                    "/\(index).png", ScriptedResponse(body: SampleImages.png(seed: index), delay: .milliseconds(120)))
                lines.append(server.url("/\(index).png"))
            }
        }
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let fetcher = try fetcher { options in
            options.concurrency = 8
            options.pacing.perHost = 2
        }
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))

        #expect(collected.results.count == 16)
        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        #expect(first.peakConcurrentRequests == 2)
        #expect(second.peakConcurrentRequests == 2)
    }

    @Test("--wait spaces request starts to one host by at least the wait")
    func waitSpacesRequests() async throws {
        let polite = try await LoopbackServer()
        let other = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<4 {
            polite.route("/\(index).png", .ok(SampleImages.png(seed: index)))
            lines.append(polite.url("/\(index).png"))
        }
        other.route("/o.png", .ok(SampleImages.png(seed: 9)))
        lines.append(other.url("/o.png"))
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let wait = Duration.milliseconds(250)
        let fetcher = try fetcher { options in
            options.concurrency = 8
            options.pacing.wait = wait
        }
        // One request first, so the measured ones share its kept-alive connection: the server's
        // accept of a new connection would delay the first arrival stamp and hide a short gap.
        polite.route("/warm.png", .ok(SampleImages.png(seed: 8)))
        _ = try await fetcher.fetch(url: polite.url("/warm.png"))
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))

        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        let arrivals = polite.recordedRequests.filter { $0.path != "/warm.png" }.map(\.receivedAt).sorted()
        #expect(arrivals.count == 4)
        for (earlier, later) in zip(arrivals, arrivals.dropFirst()) {
            // The server stamps arrivals on its own thread: allow its scheduling jitter on a busy machine.
            #expect(later - earlier >= wait - .milliseconds(25), "gap \(later - earlier)")
        }
    }

    @Test("a request held by --wait does not hold up another host's")
    func waitIsPerHost() async throws {
        let polite = try await LoopbackServer()
        let other = try await LoopbackServer()
        polite.route("/a.png", .ok(SampleImages.png(seed: 1)))
        polite.route("/b.png", .ok(SampleImages.png(seed: 2)))
        other.route("/c.png", .ok(SampleImages.png(seed: 3)))
        let engine = CurlEngine.scoped(maxTransfers: 4, pacing: TransferPacing(wait: .seconds(1)))
        _ = await engine.perform(TransferRequest(url: polite.url("/a.png")))
        async let held = engine.perform(TransferRequest(url: polite.url("/b.png")))
        let free = await engine.perform(TransferRequest(url: other.url("/c.png")))
        _ = await held

        #expect(free.failure == nil)
        let heldArrival = try #require(polite.recordedRequests(for: "/b.png").first?.receivedAt)
        let firstArrival = try #require(polite.recordedRequests(for: "/a.png").first?.receivedAt)
        // The first request opened the connection, whose accept can delay its stamp on a busy machine.
        #expect(heldArrival - firstArrival >= .milliseconds(900))
        // Server-side stamps: the servers' own threads, not the test's (busy) task pool.
        let freeArrival = try #require(other.recordedRequests(for: "/c.png").first?.receivedAt)
        #expect(freeArrival < heldArrival)
    }

    @Test("a slow host holds only its --per-host share: another host's URLs never wait for it")
    func slowHostHoldsItsShareOnly() async throws {
        let slow = try await LoopbackServer()
        let fast = try await LoopbackServer()
        let lines =
            images(on: slow, 0..<10, delay: .milliseconds(800)) + images(on: fast, 0..<10, seeds: 20)
        let collected = try await run(lines) { options in
            options.concurrency = 16
            options.pacing.perHost = 2
        }

        #expect(collected.results.count == 20)
        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        #expect(slow.peakConcurrentRequests == 2)
        // The slow host's third request can only start once one of its first two answered;
        // every fast URL, listed after all slow ones, was asked for before that.
        let slowArrivals = slow.recordedRequests.map(\.receivedAt).sorted()
        let lastFast = try #require(fast.recordedRequests.map(\.receivedAt).max())
        #expect(slowArrivals.count == 10)
        #expect(lastFast < slowArrivals[2])
    }

    @Test("Retry-After pauses its own host only: other hosts go on meanwhile")
    func retryAfterPausesItsHostOnly() async throws {
        let throttled = try await LoopbackServer()
        let other = try await LoopbackServer()
        throttled.route("/0.png", .status(429, headers: [("Retry-After", "1")]), .ok(SampleImages.png(seed: 0)))
        let lines =
            [throttled.url("/0.png")] + images(on: throttled, 1..<4) + images(on: other, 0..<6, seeds: 10)
        let collected = try await run(lines) { options in
            options.concurrency = 8
            options.pacing.perHost = 1
        }

        #expect(collected.results.count == 10)
        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        // Server-side stamps, in arrival order: the fetch tasks reach the engine in any order,
        // so the 429 is the first /0.png to arrive, not necessarily the first request.
        let arrivals = throttled.recordedRequests.sorted { $0.receivedAt < $1.receivedAt }
        #expect(arrivals.count == 5)  // the 429, its retry, three others
        let refused = try #require(arrivals.firstIndex { $0.path == "/0.png" })
        let next = try #require(arrivals.dropFirst(refused + 1).first, "the 429's retry comes after it")
        // Nothing more went to the throttled host during its pause (1 s; the bound leaves room
        // for the stamps' jitter on a loaded machine, and a request sent without the pause
        // comes within milliseconds)...
        #expect(next.receivedAt - arrivals[refused].receivedAt >= .milliseconds(600))
        // ...while the other host was served in full.
        let lastOther = try #require(other.recordedRequests.map(\.receivedAt).max())
        #expect(lastOther < next.receivedAt)
    }

    @Test("a run under --limit-rate takes at least bytes / rate")
    func limitRateBoundsThroughput() async throws {
        let server = try await LoopbackServer()
        let size = 96 * 1024
        let rate: Int64 = 256 * 1024
        var bodies: [[UInt8]] = []
        for index in 0..<4 {
            let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            bodies.append(body)
            server.route("/\(index).bin", .ok(body))
        }
        let engine = CurlEngine.scoped(maxTransfers: 4, pacing: TransferPacing(bytesPerSecond: rate))
        let clock = ContinuousClock()
        let start = clock.now
        let responses = await withTaskGroup(of: (Int, TransferResponse).self) { group in
            for index in 0..<4 {
                group.addTask { (index, await engine.perform(TransferRequest(url: server.url("/\(index).bin")))) }
            }
            var responses: [Int: TransferResponse] = [:]
            for await (index, response) in group { responses[index] = response }
            return responses
        }
        let elapsed = clock.now - start

        for index in 0..<4 {
            #expect(responses[index]?.failure == nil)
            #expect(responses[index]?.body == bodies[index])
        }
        let floor = Duration.seconds(Double(4 * size) / Double(rate))  // 1.5 s
        #expect(elapsed >= floor, "took \(elapsed)")
        #expect(elapsed < floor * 3, "took \(elapsed)")
    }
}
