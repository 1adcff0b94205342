import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--host-failures`: a host that refuses connections stops being dialled.
@Suite("Host health", .cleansUp, .timeLimit(.minutes(1)))
struct HostHealthTests {
    let directory = TemporaryDirectory("host-health")

    /// A port on 127.0.0.1 that refuses connections: a server's, once it has shut down.
    private func closedPort() async throws -> Int {
        let server = try await LoopbackServer()
        let port = server.port
        try await server.shutdown()  // the point: nothing listens there any more
        return port
    }

    private func fetcher(_ configure: (inout FetchOptions) -> Void) throws -> Fetcher {
        var options = FetchOptions()
        options.hostDownFor = .zero
        options.retryPolicy = RetryPolicy(baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        configure(&options)
        return Fetcher.scoped(options: options, cache: try DiskCache(directory: directory.appending("cache")))
    }

    private func run(_ urls: [String], with fetcher: Fetcher) async -> CollectedRun {
        let list = directory.write(urls.joined(separator: "\n"), to: "list.txt")
        return await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
    }

    private func run(_ urls: [String], _ configure: (inout FetchOptions) -> Void) async throws -> CollectedRun {
        await run(urls, with: try fetcher(configure))
    }

    @Test("after N refused connections the host's remaining URLs fail at once as host-down")
    func hostGoesDownAfterNFailures() async throws {
        let port = try await closedPort()
        let urls = (0..<10).map { "http://127.0.0.1:\(port)/img/\($0).png" }
        let collected = try await run(urls) {
            $0.concurrency = 1
            $0.retries = 0
            $0.hostFailures = 3
        }

        let kinds = collected.results.compactMap { $0.failure?.kind }
        #expect(collected.results.count == 10)
        #expect(kinds.filter { $0 == .connect }.count == 3)
        #expect(kinds.filter { $0 == .hostDown }.count == 7)
        #expect(FetchFailure.Kind.hostDown.isPermanent == false)
    }

    @Test("a host that swallows connections is given up after one connect timeout, its other URLs at once")
    func silentHostCostsOneTimeout() async throws {
        // Accepts and never answers: a TLS client's handshake never ends, as with dropped SYNs.
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let live = try await LoopbackServer()
        var urls = (0..<12).map { "https://127.0.0.1:\(silent.port)/img/\($0).png" }
        for index in 0..<4 {
            live.route("/\(index).png", .ok(SampleImages.png(seed: index)))
            urls.append(live.url("/\(index).png"))
        }
        let clock = ContinuousClock()
        let start = clock.now
        let collected = try await run(urls) {
            $0.concurrency = 32
            $0.pacing.perHost = 3
            $0.timeout = .seconds(1)
            $0.retries = 2
            $0.hostFailures = 5
        }
        let elapsed = clock.now - start

        let silentResults = collected.results.filter { $0.url.contains(":\(silent.port)/") }
        #expect(silentResults.count == 12)
        // The URL that met the timeout keeps its kind; the others carry the host's cause.
        #expect(silentResults.filter { $0.failure?.kind == .timeout }.count == 1)
        let down = silentResults.filter { $0.failure?.kind == .hostDown }
        #expect(down.count == 11)
        #expect(down.allSatisfy { $0.failure?.detail.contains("no connection within the timeout") == true })
        #expect(down.allSatisfy { $0.failure?.hostCause == .timeout })
        // No retry wave (before: a wave of --per-host per try, 9 here): at most the probe's
        // connection (closed at once, so the server often never counts it) and the first
        // transfer's, whose handshake the timeout ends.
        #expect(silent.connections <= 2)
        #expect(elapsed < .seconds(10), "took \(elapsed)")
        #expect(collected.results.filter { $0.status == .downloaded }.count == 4)
    }

    @Test("a timeout after the request reached the host never gives the host up")
    func reachedHostIsNotGivenUpOnTimeout() async throws {
        let server = try await LoopbackServer()
        server.route("/ok.png", .ok(SampleImages.png()))
        server.route("/stall.png", ScriptedResponse(body: SampleImages.png(), behavior: .stall(sentBytes: 0)))
        server.route("/after.png", .ok(SampleImages.png(seed: 2)))
        let fetcher = try fetcher {
            $0.concurrency = 1
            $0.timeout = .seconds(1)
            $0.retries = 0
        }
        // The answer first, alone: with -j 1 a list's order of starts is not its order of
        // lines, and a host that never answered is given up at its first timeout.
        let answer = try await fetcher.fetch(url: server.url("/ok.png"))
        let collected = await run([server.url("/stall.png"), server.url("/after.png")], with: fetcher)

        #expect(answer.status == .downloaded)
        #expect(collected.results.first { $0.url.hasSuffix("/stall.png") }?.failure?.kind == .timeout)
        #expect(collected.results.first { $0.url.hasSuffix("/after.png") }?.status == .downloaded)
    }

    @Test("retries of a refused host end as host-down instead of sleeping")
    func retriesStopOnceHostIsDown() async throws {
        let port = try await closedPort()
        let urls = (0..<6).map { "http://127.0.0.1:\(port)/img/\($0).png" }
        let clock = ContinuousClock()
        let start = clock.now
        let collected = try await run(urls) {
            $0.concurrency = 2
            $0.retries = 5
            $0.hostFailures = 1
            // A real sleep would blow the time limit: the retry must not wait at all.
            $0.retryPolicy = RetryPolicy(baseDelay: .seconds(20))
        }

        #expect(collected.results.count == 6)
        // The URL whose connection was refused keeps `connect`; no retry slept.
        #expect(collected.results.filter { $0.failure?.kind == .connect }.count == 1)
        #expect(collected.results.filter { $0.failure?.kind == .hostDown }.count == 5)
        #expect(clock.now - start < .seconds(5))
    }

    @Test("--host-failures 0 never declares a host down")
    func zeroTurnsItOff() async throws {
        let port = try await closedPort()
        let urls = (0..<6).map { "http://127.0.0.1:\(port)/img/\($0).png" }
        let collected = try await run(urls) {
            $0.concurrency = 1
            $0.retries = 0
            $0.hostFailures = 0
        }

        #expect(collected.results.count == 6)
        #expect(collected.results.allSatisfy { $0.failure?.kind == .connect })
    }

    @Test("a host that answers is never declared down by HTTP errors")
    func httpErrorsDoNotCount() async throws {
        let server = try await LoopbackServer()
        let urls = (0..<8).map { server.url("/missing/\($0).png") }
        let collected = try await run(urls) {
            $0.concurrency = 1
            $0.retries = 0
            $0.hostFailures = 2
        }

        #expect(collected.results.allSatisfy { $0.failure?.kind == .http(404) })
        #expect(server.totalRequests == 8)
    }
}
