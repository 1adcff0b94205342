import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The engine against a real loopback server: what curl sends, and what each way a
/// response can go wrong becomes. Every test asserts what the server itself saw.
@Suite("Transport", .cleansUp, .timeLimit(.minutes(1)))
struct TransportTests {
    let directory = TemporaryDirectory("transport")

    private func fetcher(_ configure: (inout FetchOptions) -> Void = { _ in }) throws -> Fetcher {
        try Fetcher.forTesting(in: directory, configure)
    }

    // MARK: - Concurrency and connections

    @Test("transfers in flight never exceed -j, and reach it when there is enough work")
    func concurrencyIsExactlyJ() async throws {
        let server = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<24 {
            let body = SampleImages.png(seed: index)
            server.route("/slow/\(index).png", ScriptedResponse(status: 200, body: body, delay: .milliseconds(150)))
            lines.append(server.url("/slow/\(index).png"))
        }
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let fetcher = try fetcher { $0.concurrency = 4 }
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))

        #expect(collected.results.count == 24)
        #expect(collected.results.allSatisfy { $0.status == .downloaded })
        #expect(server.totalRequests == 24)
        #expect(server.peakConcurrentRequests == 4)
        #expect(server.connectionsAccepted <= 4)
    }

    @Test("one transfer at a time reuses a single kept-alive connection")
    func connectionIsReused() async throws {
        let server = try await LoopbackServer()
        let engine = CurlEngine.scoped(maxTransfers: 1)
        server.route("/a.png", .ok(SampleImages.png()))
        for _ in 0..<20 {
            let response = await engine.perform(TransferRequest(url: server.url("/a.png")))
            #expect(response.failure == nil)
            #expect(response.body == SampleImages.png())
        }

        #expect(server.requests(for: "/a.png") == 20)
        #expect(server.connectionsAccepted == 1)
    }

    /// A host whose `/slow.png` answers after 4 s (two of them hold two slots of `-j 4`), and
    /// `count` hosts whose `/a.png` answers at once.
    private func busyAndQuickHosts(_ count: Int) async throws -> (busy: LoopbackServer, quick: [LoopbackServer]) {
        let busy = try await LoopbackServer()
        busy.route("/slow.png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .seconds(4)))
        var quick: [LoopbackServer] = []
        for _ in 0..<count {
            let server = try await LoopbackServer()
            server.route("/a.png", .ok(SampleImages.png()))
            quick.append(server)
        }
        return (busy, quick)
    }

    @Test(
        "with half of -j running and idle connections to spare, a host with nothing waiting gets its connection closed")
    func busyRunClosesConnectionsNothingWaitsFor() async throws {
        let (busy, hosts) = try await busyAndQuickHosts(4)
        let other = hosts[0]
        let engine = CurlEngine.scoped(maxTransfers: 4)

        // Nothing else running: connections are kept (one idle per host) and reused.
        for server in hosts {
            #expect(await engine.perform(TransferRequest(url: server.url("/a.png"))).failure == nil)
        }
        for _ in 0..<2 { #expect(await engine.perform(TransferRequest(url: other.url("/a.png"))).failure == nil) }
        #expect(other.connectionsAccepted == 1)

        // Two of four slots taken by another host, four idle connections beside them: each
        // request's connection ends with it (the first goes out on the one kept above).
        async let slow = engine.perform(TransferRequest(url: busy.url("/slow.png")))
        async let slowToo = engine.perform(TransferRequest(url: busy.url("/slow.png")))
        let deadline = ContinuousClock.now + .seconds(3)
        while busy.totalRequests < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(busy.totalRequests == 2)
        for _ in 0..<3 { #expect(await engine.perform(TransferRequest(url: other.url("/a.png"))).failure == nil) }
        #expect(await slow.failure == nil)
        #expect(await slowToo.failure == nil)
        #expect(other.requests(for: "/a.png") == 6)
        #expect(other.connectionsAccepted == 3)
    }

    @Test(
        "under the same pressure an HTTPS connection is kept: a new one would cost a TLS handshake",
        .enabled(if: LocalNginx.isAvailable, "nginx or openssl is not installed, so no local HTTPS server"))
    func busyRunKeepsHTTPSConnections() async throws {
        let (busy, hosts) = try await busyAndQuickHosts(3)
        let nginx = try await LocalNginx.start(directory: directory.appending("nginx"))
        try nginx.serve(SampleImages.png(), as: "a.png")
        var secure = TransferRequest(url: nginx.url("a.png"))
        secure.connection = ConnectionOptions(caCertificateFile: nginx.caFile)
        let engine = CurlEngine.scoped(maxTransfers: 4)
        for server in hosts {
            #expect(await engine.perform(TransferRequest(url: server.url("/a.png"))).failure == nil)
        }
        #expect(await engine.perform(secure).failure == nil)

        // As above: two of four slots taken, four idle connections beside them.
        async let slow = engine.perform(TransferRequest(url: busy.url("/slow.png")))
        async let slowToo = engine.perform(TransferRequest(url: busy.url("/slow.png")))
        let deadline = ContinuousClock.now + .seconds(3)
        while busy.totalRequests < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(busy.totalRequests == 2)
        for _ in 0..<3 { #expect(await engine.perform(secure).failure == nil) }
        #expect(await slow.failure == nil)
        #expect(await slowToo.failure == nil)
        let logged = nginx.loggedRequests
        #expect(logged.count == 4)
        #expect(Set(logged.map(\.connection)).count == 1, "\(logged)")
    }

    // MARK: - Headers

    @Test("requests send the default Accept and the configured User-Agent")
    func defaultHeaders() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let fetcher = try fetcher { $0.userAgent = "tester/1.0" }
        let result = try await fetcher.fetch(url: server.url("/a.png"))

        #expect(result.status == .downloaded)
        let request = try #require(server.recordedRequests(for: "/a.png").first)
        #expect(request.header("Accept") == "image/*,*/*;q=0.8")
        #expect(request.header("User-Agent") == "tester/1.0")
    }

    @Test("an -H header overrides Accept and extra headers are sent as given")
    func headersOverrideAccept() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let fetcher = try fetcher { $0.headers = ["accept: image/png", "X-Token: abc"] }
        _ = try await fetcher.fetch(url: server.url("/a.png"))

        let request = try #require(server.recordedRequests(for: "/a.png").first)
        #expect(request.headers.filter { $0.0.lowercased() == "accept" }.map(\.1) == ["image/png"])
        #expect(request.header("X-Token") == "abc")
    }

    @Test("validators and Retry-After come from the final response, not from a redirect hop")
    func validatorsComeFromFinalResponse() async throws {
        let server = try await LoopbackServer()
        server.route(
            "/hop", ScriptedResponse(status: 302, headers: [("Location", "/final.png"), ("ETag", "\"hop\"")]))
        let headers = [("ETag", "\"v2\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")]
        server.route("/final.png", .ok(SampleImages.png(), headers: headers))
        let engine = CurlEngine.scoped(maxTransfers: 1)
        let response = await engine.perform(TransferRequest(url: server.url("/hop")))

        #expect(response.failure == nil)
        #expect(response.httpStatus == 200)
        #expect(response.etag == "\"v2\"")
        #expect(response.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(response.retryAfter == nil)
    }

    // MARK: - Redirects

    @Test("a redirect chain is followed to the image")
    func redirectChainIsFollowed() async throws {
        let server = try await LoopbackServer()
        server.route("/r1", .redirect(to: "/r2", status: 301))
        server.route("/r2", .redirect(to: server.url("/r3")))
        server.route("/r3", .redirect(to: "/final.png", status: 307))
        server.route("/final.png", .ok(SampleImages.png(seed: 3)))
        let fetcher = try fetcher()
        let result = try await fetcher.fetch(url: server.url("/r1"))

        #expect(result.status == .downloaded)
        #expect(result.httpStatus == 200)
        #expect(result.bytes == Int64(SampleImages.png(seed: 3).count))
        for path in ["/r1", "/r2", "/r3", "/final.png"] { #expect(server.requests(for: path) == 1) }
    }

    @Test("a redirect loop stops after --max-redirects hops as too-many-redirects")
    func redirectLoopStops() async throws {
        let server = try await LoopbackServer()
        server.route("/loop", .redirect(to: "/loop"))
        let fetcher = try fetcher { $0.maxRedirects = 3 }
        let result = try await fetcher.fetch(url: server.url("/loop"))

        #expect(result.failure?.kind == .tooManyRedirects)
        #expect(result.failure?.kind.isPermanent == true)
        // The first request and three followed hops; the fourth redirect is refused.
        #expect(server.requests(for: "/loop") == 4)
    }

    @Test("a redirect to file:///etc/passwd is refused as bad-redirect")
    func redirectToFileIsRefused() async throws {
        let server = try await LoopbackServer()
        server.route("/evil", .redirect(to: "file:///etc/passwd"))
        let fetcher = try fetcher()
        let result = try await fetcher.fetch(url: server.url("/evil"))

        #expect(result.failure?.kind == .badRedirect)
        #expect(result.failure?.kind.isPermanent == true)
        #expect(result.path == nil)
        #expect(server.requests(for: "/evil") == 1)
    }

    // MARK: - Sizes

    @Test("a body over --max-bytes with Content-Length is refused before it flows")
    func declaredOversizeIsAbortedEarly() async throws {
        let server = try await LoopbackServer()
        let body = [UInt8](repeating: 0x42, count: 32 << 20)
        server.route("/big.png", ScriptedResponse(status: 200, body: body, behavior: .paced(chunk: 64 << 10)))
        let fetcher = try fetcher { $0.maxBytes = 1 << 20 }
        let result = try await fetcher.fetch(url: server.url("/big.png"))

        #expect(result.failure?.kind == .tooLarge)
        #expect(result.failure?.detail == "body exceeds 1.0 MiB")
        #expect(server.bytesSent(for: "/big.png") < body.count / 4)
    }

    @Test("a streamed body without Content-Length is cut once it passes --max-bytes")
    func streamedOversizeIsAbortedEarly() async throws {
        let server = try await LoopbackServer()
        let body = [UInt8](repeating: 0x42, count: 32 << 20)
        server.route("/big.png", ScriptedResponse(status: 200, body: body, behavior: .streamed(chunk: 64 << 10)))
        let fetcher = try fetcher { $0.maxBytes = 1 << 20 }
        let result = try await fetcher.fetch(url: server.url("/big.png"))

        #expect(result.failure?.kind == .tooLarge)
        #expect(server.bytesSent(for: "/big.png") < body.count / 4)
    }
}
