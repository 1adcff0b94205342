import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// A remote that is down or hangs costs a bounded time once, then every URL goes to the
/// origin as without it: timed, so run apart (the Makefile's TIMED_SUITES).
@Suite("Remote cache down or hanging", .cleansUp, .timeLimit(.minutes(1)))
struct RemoteCacheDownTests {
    let directory = TemporaryDirectory("remote-down")

    /// Runs `urls` concurrently (as a run's `-j` does) through one fetcher with `remote`.
    private func run(_ urls: [String], remote: String) async throws -> (results: [FetchResult], RemoteTier?, Duration) {
        var options = FetchOptions()
        options.remoteCache.urls = [remote]
        let cache = try DiskCache(directory: directory.appending("cache"))
        let started = ContinuousClock.now
        let (results, tier) = await withFetcher(options: options, cache: cache) { fetcher in
            let results = await withTaskGroup(of: FetchResult.self) { group in
                for url in urls { group.addTask { try! await fetcher.fetch(url: url) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            return (results, fetcher.remote)
        }
        return (results, tier, ContinuousClock.now - started)
    }

    /// `scheme`'s remote URL on `port`, with a password when `password` is given.
    private func remote(_ scheme: String, port: Int, password: String? = nil) -> String {
        let userinfo = password.map { "user:\($0)@" } ?? ""
        return scheme == "redis" ? "redis://\(userinfo)127.0.0.1:\(port)" : "http://\(userinfo)127.0.0.1:\(port)/cache"
    }

    @Test(
        "a remote whose port refuses connections costs almost nothing and is named, password masked, in one warning",
        arguments: ["http", "redis"])
    func refusedConnections(scheme: String) async throws {
        let (origin, urls) = try await RemoteRunner.origin(40)
        let gone = try await LoopbackServer()
        let closed = gone.port
        try await gone.shutdown()
        let (results, tier, elapsed) = try await run(urls, remote: remote(scheme, port: closed, password: "hunter2"))
        #expect(results.allSatisfy { $0.status == .downloaded } && origin.totalRequests == 40)
        let warnings = try #require(tier?.warnings)
        #expect(warnings.count == 1)
        #expect(warnings.first?.remote.contains("hunter2") == false)
        #expect(elapsed < .seconds(2))
    }

    @Test("a remote that never completes a connection costs under 2 s in all", arguments: ["http", "redis"])
    func blackholedConnections(scheme: String) async throws {
        let (origin, urls) = try await RemoteRunner.origin(40)
        let blackhole = try BlackholePort()
        let (results, tier, elapsed) = try await run(urls, remote: remote(scheme, port: blackhole.port))
        #expect(results.allSatisfy { $0.status == .downloaded } && origin.totalRequests == 40)
        #expect(tier?.warnings.count == 1 && tier?.counts.uploads == 0)
        #expect(elapsed < .seconds(2))
    }

    /// `count` URLs run against a stub Redis server that answers each command line with
    /// `reply`; every URL must reach the origin and the remote give one warning.
    private func runAgainstRedis(
        replying reply: [RawResponseServer.Step], urls count: Int
    ) async throws -> (warning: String?, elapsed: Duration) {
        let (origin, urls) = try await RemoteRunner.origin(count)
        let redis = try await RawResponseServer(reply, requestEnd: "\r\n")
        let (results, tier, elapsed) = try await run(urls, remote: remote("redis", port: redis.port))
        #expect(results.allSatisfy { $0.status == .downloaded } && origin.totalRequests == count)
        #expect(tier?.warnings.count == 1)
        return (tier?.warnings.first?.detail, elapsed)
    }

    @Test("a Redis remote that trickles its replies a byte at a time costs under 3 s in all")
    func tricklingRedis() async throws {
        // Each byte comes well within any per-read timeout; the whole reply would take 30 s.
        let trickle =
            [RawResponseServer.Step("$100\r\n")]
            + (0..<100).map { _ in RawResponseServer.Step("x", after: .milliseconds(300)) }
        let (warning, elapsed) = try await runAgainstRedis(replying: trickle, urls: 40)
        #expect(warning?.contains("no answer") == true)
        #expect(elapsed < .seconds(3))
    }

    @Test("a Redis remote that announces a value larger than asked for is switched off before it is read")
    func oversizedRedisReply() async throws {
        // A record is asked for with a 64 KiB bound; this one claims 100 MB and sends 1 MB at once.
        let flood = [
            RawResponseServer.Step("$100000000\r\n" + String(repeating: "x", count: 1 << 20)),
            RawResponseServer.Step("x", after: .seconds(30)),
        ]
        let (warning, elapsed) = try await runAgainstRedis(replying: flood, urls: 4)
        #expect(warning?.contains("over") == true)
        #expect(elapsed < .seconds(2))
    }

    @Test("a remote that answers a lookup's head and then hangs costs under 2 s in all")
    func hangingAnswers() async throws {
        let (origin, urls) = try await RemoteRunner.origin(40)
        let hanging = try await LoopbackServer()
        for url in urls {
            let path = "/cache/ac/" + (try URLKey(parsing: url)).digest.hex
            hanging.route(
                path,
                ScriptedResponse(status: 200, body: Array(repeating: 0x20, count: 100), behavior: .stall(sentBytes: 1)))
        }
        let (results, tier, elapsed) = try await run(urls, remote: hanging.url("/cache"))
        #expect(results.allSatisfy { $0.status == .downloaded } && origin.totalRequests == 40)
        #expect(tier?.warnings.count == 1)
        #expect(elapsed < .seconds(2))
    }
}
