import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// How a stalled, cut or refused transfer is reported, and how fast it is let go.
@Suite("Transport failures", .cleansUp, .timeLimit(.minutes(1)))
struct TransportFailureTests {
    let directory = TemporaryDirectory("transport-failures")

    private func request(_ url: String, timeout: Duration = .seconds(1)) -> TransferRequest {
        TransferRequest(url: url, timeout: timeout)
    }

    // MARK: - Timeouts

    @Test("a body that stalls fails as timeout within the limit")
    func stalledBodyTimesOut() async throws {
        let server = try await LoopbackServer()
        server.route(
            "/stall.png",
            ScriptedResponse(body: SampleImages.png(width: 64, height: 64), behavior: .stall(sentBytes: 100)))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let clock = ContinuousClock()
        let start = clock.now
        let response = await engine.perform(request(server.url("/stall.png")))
        let elapsed = clock.now - start

        #expect(response.failure?.kind == .timeout)
        #expect(response.failure?.kind.isPermanent == false)
        #expect(response.body.isEmpty)
        #expect(server.bytesSent(for: "/stall.png") == 100)
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(3))
    }

    @Test("a server that never answers fails as timeout within the limit")
    func silentServerTimesOut() async throws {
        let server = try await LoopbackServer()
        server.route("/silent.png", ScriptedResponse(body: SampleImages.png(), delay: .seconds(30)))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let clock = ContinuousClock()
        let start = clock.now
        let response = await engine.perform(request(server.url("/silent.png")))
        let elapsed = clock.now - start

        #expect(response.failure?.kind == .timeout)
        #expect(server.requests(for: "/silent.png") == 1)
        #expect(elapsed < .seconds(3))
    }

    @Test("a slow but steady body is never cut by the timeout")
    func steadySlowBodySurvives() async throws {
        let server = try await LoopbackServer()
        let body = SampleImages.png(width: 16, height: 16)
        let chunk = body.count / 8 + 1
        server.route(
            "/slow.png", ScriptedResponse(body: body, behavior: .trickled(chunk: chunk, interval: .milliseconds(300))))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let clock = ContinuousClock()
        let start = clock.now
        let response = await engine.perform(request(server.url("/slow.png")))
        let elapsed = clock.now - start

        #expect(response.failure == nil)
        #expect(response.body == body)
        // Longer in total than the 1 s timeout: only stalls count, not the whole transfer.
        #expect(elapsed > .seconds(1))
    }

    // MARK: - Dropped connections

    @Test("a body shorter than its Content-Length is truncated and transient")
    func shortBodyIsTruncated() async throws {
        let server = try await LoopbackServer()
        let body = SampleImages.png(width: 32, height: 32)
        server.route("/cut.png", ScriptedResponse(body: body, behavior: .truncated(sentBytes: 200)))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let response = await engine.perform(request(server.url("/cut.png")))

        #expect(response.failure?.kind == .truncated)
        #expect(response.failure?.kind.isPermanent == false)
        #expect(response.failure?.kind.isRetryable == true)
        #expect(response.httpStatus == 200)
        #expect(response.body.isEmpty)
        #expect(server.bytesSent(for: "/cut.png") == 200)
    }

    @Test("a connection closed before any response byte is connect and transient")
    func resetIsConnect() async throws {
        let server = try await LoopbackServer()
        server.route("/reset.png", ScriptedResponse(behavior: .reset))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let response = await engine.perform(request(server.url("/reset.png")))

        #expect(response.failure?.kind == .connect)
        #expect(response.failure?.kind.isPermanent == false)
        #expect(response.failure?.kind.isRetryable == true)
        #expect(server.requests(for: "/reset.png") >= 1)
    }

    @Test("a 404 is http-404, permanent, and carries no body")
    func notFoundIsPermanent() async throws {
        let server = try await LoopbackServer()
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let response = await engine.perform(request(server.url("/missing.png")))

        #expect(response.failure?.kind == .http(404))
        #expect(response.failure?.kind.isPermanent == true)
        #expect(response.httpStatus == 404)
        #expect(response.body.isEmpty)
        #expect(server.requests(for: "/missing.png") == 1)
    }

    // MARK: - Cancellation

    @Test("cancelAll ends queued and running transfers promptly as interrupted and caches nothing")
    func cancelAllInterruptsEverything() async throws {
        let server = try await LoopbackServer()
        var keys: [URLKey] = []
        for index in 0..<12 {
            server.route(
                "/wait/\(index).png", ScriptedResponse(body: SampleImages.png(seed: index), delay: .seconds(20)))
            keys.append(try URLKey(parsing: server.url("/wait/\(index).png")))
        }
        var options = FetchOptions()
        options.concurrency = 3
        let cache = try DiskCache(directory: directory.appending("cache"))
        let fetcher = Fetcher.scoped(options: options, cache: cache)
        let clock = ContinuousClock()
        let (results, elapsed) = await withTaskGroup(of: FetchResult.self) { group in
            for key in keys { group.addTask { await fetcher.fetch(key, spelling: key.string) } }
            // Wait until the server holds -j requests, so some run and the rest are queued.
            let deadline = clock.now + .seconds(10)
            while server.totalRequests < 3, clock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            let start = clock.now
            fetcher.cancelAll()
            let results = await group.reduce(into: [FetchResult]()) { $0.append($1) }
            return (results, clock.now - start)
        }

        #expect(results.count == 12)
        #expect(results.allSatisfy { $0.status == .failed && $0.failure?.kind == .interrupted })
        #expect(elapsed < .seconds(2))
        #expect(server.totalRequests == 3)
        #expect(keys.allSatisfy { cache.entry(for: $0) == nil })
    }

    @Test("cancelling the calling task drops its transfer")
    func taskCancellationDropsTransfer() async throws {
        let server = try await LoopbackServer()
        server.route("/wait.png", ScriptedResponse(body: SampleImages.png(), delay: .seconds(20)))
        let engine = CurlEngine.scoped(maxTransfers: 2)
        let url = server.url("/wait.png")
        let task = Task { await engine.perform(TransferRequest(url: url, timeout: .seconds(15))) }
        try #require(await server.waitForRequests(1))
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let response = await task.value
        let elapsed = clock.now - start

        #expect(response.failure?.kind == .interrupted)
        #expect(elapsed < .seconds(2))
    }

    @Test("cancelling the task that called Fetcher.fetch drops its transfer (no unstructured task in between)")
    func fetchFollowsCallerCancellation() async throws {
        let server = try await LoopbackServer()
        server.route("/wait.png", ScriptedResponse(body: SampleImages.png(), delay: .seconds(20)))
        let fetcher = try Fetcher.forTesting(in: directory, { $0.retries = 0 })
        let key = try URLKey(parsing: server.url("/wait.png"))
        let task = Task { await fetcher.fetch(key, spelling: key.string) }
        try #require(await server.waitForRequests(1))
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let result = await task.value

        #expect(result.failure?.kind == .interrupted)
        #expect(clock.now - start < .seconds(2))
    }
}
