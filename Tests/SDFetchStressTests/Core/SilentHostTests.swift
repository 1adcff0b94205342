import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Servers that never finish: a floor on the rate (`--speed-limit`, `--speed-time`) ends a
/// trickle, and a host that never answered is given up at its first timeout, connected or
/// not, while a host that answered before keeps its retries. Nothing here is timed: the
/// suite's limit is what a run without these rules would blow.
@Suite("Silent and trickling hosts", .cleansUp, .serialized, .timeLimit(.minutes(1)))
struct SilentHostTests {
    let directory = TemporaryDirectory("silent-hosts")

    private func fetcher(_ configure: (inout FetchOptions) -> Void) throws -> Fetcher {
        try Fetcher.forTesting(
            in: directory,
            { options in
                options.hostDownFor = .zero  // each test starts with no memory of hosts
                configure(&options)
            })
    }

    private func run(_ fetcher: Fetcher, _ urls: [String]) async -> CollectedRun {
        let list = directory.write(urls.joined(separator: "\n"), to: "list-\(UUID().uuidString).txt")
        return await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
    }

    /// `count` URLs on `server`, each an image answered after `delay`.
    private func liveURLs(_ count: Int, on server: LoopbackServer, delay: Duration) -> [String] {
        (0..<count).map { index in
            var response = ScriptedResponse.ok(SampleImages.png(seed: index))
            response.delay = delay
            server.route("/\(index).png", response)
            return server.url("/\(index).png")
        }
    }

    /// The head at once, then a body of 100,000 declared bytes arriving a few bytes a second.
    private static func tricklingBody(steps: Int) -> [RawResponseServer.Step] {
        [.init("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n")]
            + Array(repeating: RawResponseServer.Step([0x89], after: .milliseconds(100)), count: steps)
    }

    @Test("a body trickled under the floor fails as timeout, not when the server is done")
    func trickledBodyIsCut() async throws {
        // 400 bytes dripped over 40 s: without the floor the transfer lasts until the server
        // closes, and then fails truncated.
        let server = try await RawResponseServer(Self.tricklingBody(steps: 400))
        let fetcher = try fetcher {
            $0.lowSpeed = LowSpeedLimit(bytesPerSecond: 100, window: .seconds(1))
            $0.retries = 0
        }
        let result = try await fetcher.fetch(url: server.url("/slow.png"))
        #expect(result.failure?.kind == .timeout, "\(String(describing: result.failure))")
        #expect(result.failure?.detail.contains("slower than 100 bytes/s for 1 s") == true)
    }

    @Test("a head dripped a byte at a time fails as timeout")
    func trickledHeadIsCut() async throws {
        let drip = Array("X-Drip: \(String(repeating: "a", count: 300))\r\n".utf8).map {
            RawResponseServer.Step([$0], after: .milliseconds(100))
        }
        let server = try await RawResponseServer([.init("HTTP/1.1 200 OK\r\n")] + drip)
        let fetcher = try fetcher {
            $0.lowSpeed = LowSpeedLimit(bytesPerSecond: 100, window: .seconds(1))
            $0.retries = 0
        }
        let result = try await fetcher.fetch(url: server.url("/drip.png"))
        #expect(result.failure?.kind == .timeout, "\(String(describing: result.failure))")
    }

    @Test("a steady body above the floor is never cut")
    func steadyBodyAboveTheFloorPasses() async throws {
        let server = try await LoopbackServer()
        let image = SampleImages.png(width: 64, height: 64)
        // About 4 KB/s for a second or more, over a floor of 1 KB/s measured per 0.5 s.
        server.route(
            "/steady.png", ScriptedResponse(body: image, behavior: .trickled(chunk: 400, interval: .milliseconds(100))))
        let fetcher = try fetcher { $0.lowSpeed = LowSpeedLimit(bytesPerSecond: 1000, window: .milliseconds(500)) }
        let result = try await fetcher.fetch(url: server.url("/steady.png"))
        #expect(result.status == .downloaded, "\(String(describing: result.failure))")
    }

    @Test("a host that accepts and never answers: its first lanes time out, the rest is host-down at once")
    func silentAfterAcceptIsGivenUp() async throws {
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let urls = (0..<12).map { silent.url("/img/\($0).png") }
        let fetcher = try fetcher {
            $0.concurrency = 8
            $0.pacing.perHost = 2
            $0.timeout = .seconds(1)
            $0.retries = 2
        }
        let collected = await run(fetcher, urls)

        let kinds = collected.results.map { $0.failure?.kind }
        #expect(collected.results.count == 12)
        // The URLs that met the silence keep their own kind; the others carry the host's cause.
        let timedOut = kinds.filter { $0 == .timeout }.count
        #expect((1...2).contains(timedOut), "\(kinds)")
        let down = collected.results.filter { $0.failure?.kind == .hostDown }
        #expect(down.count == 12 - timedOut)
        #expect(down.allSatisfy { $0.failure?.hostCause == .timeout })
        #expect(
            down.allSatisfy { $0.failure?.detail.contains("no answer within the timeout after connecting") == true })
        // No retry wave: the first lanes only (before: 3 tries of every URL).
        #expect(silent.connections <= 2, "\(silent.connections) connections")
        // A host that never answered is not "slow": it is down.
        #expect(fetcher.slowHosts(minimum: 1).isEmpty)
        #expect(fetcher.downHosts.map(\.kind) == [.timeout])
    }

    @Test("many URLs on a trickling host end after one round of lanes")
    func tricklingHostIsGivenUp() async throws {
        let server = try await RawResponseServer(Self.tricklingBody(steps: 400))
        let urls = (0..<40).map { server.url("/img/\($0).png") }
        let fetcher = try fetcher {
            $0.lowSpeed = LowSpeedLimit(bytesPerSecond: 100, window: .seconds(1))
            $0.pacing.perHost = 4
            $0.retries = 2
        }
        let collected = await run(fetcher, urls)

        #expect(collected.results.count == 40)
        #expect(collected.results.filter { $0.failure?.kind == .hostDown }.count >= 36)
        #expect(server.connections <= 4, "\(server.connections) connections")
    }

    @Test("a host that answered once keeps its retries after a timeout")
    func answeredHostKeepsRetries() async throws {
        let server = try await LoopbackServer()
        server.route("/ok.png", .ok(SampleImages.png()))
        for index in 0..<2 {
            server.route(
                "/stall\(index).png", ScriptedResponse(body: SampleImages.png(), behavior: .stall(sentBytes: 0)))
        }
        let fetcher = try fetcher {
            $0.concurrency = 1
            $0.timeout = .seconds(1)
            $0.retries = 1
        }
        // The answer first, alone: with -j 1 a list's order of starts is not its order of lines.
        let answer = try await fetcher.fetch(url: server.url("/ok.png"))
        let collected = await run(fetcher, [server.url("/stall0.png"), server.url("/stall1.png")])

        #expect(answer.status == .downloaded)
        for index in 0..<2 {
            #expect(collected.result(for: server.url("/stall\(index).png"))?.failure?.kind == .timeout)
            #expect(server.requests(for: "/stall\(index).png") == 2)
        }
        #expect(fetcher.downHosts.isEmpty)
    }

    @Test("a dead host met late is probed while -j is busy: its URLs never hold a slot in a connect")
    func deadHostIsProbedAhead() async throws {
        let dead = try BlackholePort()
        // Four live hosts fill -j 4 with answers that take a while, and their 24 URLs the 16
        // fetches the run keeps in flight; the dead host's URLs come last, waiting for a slot
        // while its probe runs outside -j.
        var urls: [String] = []
        var live: [LoopbackServer] = []
        for host in 0..<4 {
            let server = try await LoopbackServer()
            for index in 0..<6 {
                var response = ScriptedResponse.ok(SampleImages.png(seed: host * 10 + index))
                response.delay = .milliseconds(500)
                server.route("/\(index).png", response)
                urls.append(server.url("/\(index).png"))
            }
            live.append(server)
        }
        urls += (0..<3).map { dead.url("/\($0).png") }
        let fetcher = try fetcher {
            $0.concurrency = 4
            $0.timeout = .seconds(2)
            $0.retries = 0
        }
        let collected = await run(fetcher, urls)

        #expect(collected.results.filter { $0.status == .downloaded }.count == 24)
        let deadResults = collected.results.filter { $0.url.contains(":\(dead.port)/") }
        #expect(deadResults.count == 3)
        // No URL of the dead host met the timeout itself: the probe did, outside -j.
        #expect(deadResults.allSatisfy { $0.failure?.kind == .hostDown }, "\(deadResults.map(\.failure))")
        #expect(deadResults.allSatisfy { $0.failure?.hostCause == .timeout })
        #expect(deadResults.allSatisfy { $0.failure?.detail.contains("no TCP connection") == true })
    }
    @Test("a dead host listed after more URLs than the run keeps in flight is probed when its line is read")
    func deadHostListedLateIsProbedWhenRead() async throws {
        let dead = try BlackholePort()
        let server = try await LoopbackServer()
        // -j 4 keeps 16 fetches in flight; 60 answers of 400 ms take about 6 s on 4 lanes.
        // Probed once its request reached the engine, the dead host would be given up after
        // every live answer (4.4 s to get there, then the 2 s timeout); probed when its line
        // is read, it is given up about 2 s in, with most live answers still to come.
        let urls = liveURLs(60, on: server, delay: .milliseconds(400)) + [dead.url("/late.png")]
        let fetcher = try fetcher {
            $0.concurrency = 4
            $0.timeout = .seconds(2)
            $0.retries = 0
        }
        // A stream, not a file: it cannot be read twice, so no scout reads ahead of the queue.
        let stream = AsyncStream<String> { continuation in
            for url in urls { continuation.yield(url) }
            continuation.finish()
        }
        let run = FetchRun(fetcher: fetcher, sources: [])
        var results: [FetchResult] = []
        var answersBeforeDown: Int?
        await run.run(reader: URLListReader(urls: stream, name: "late-dead")) { event in
            guard case .results(let batch) = event else { return }
            if answersBeforeDown == nil, fetcher.downHosts.contains(where: { $0.host.hasSuffix(":\(dead.port)") }) {
                answersBeforeDown = results.count
            }
            results += batch
        }

        let down = try #require(answersBeforeDown, "the dead host was never given up")
        #expect(down < 45, "given up after \(down) of 60 live answers")
        #expect(results.first { $0.url == dead.url("/late.png") }?.failure?.kind == .hostDown)
        #expect(results.filter { $0.status == .downloaded }.count == 60)
    }

    @Test("a dead host listed past the look-ahead of a file is probed before its line is read")
    func deadHostPastTheLookAheadIsScouted() async throws {
        let dead = try BlackholePort()
        let server = try await LoopbackServer()
        // The run reads about 2,064 network lines ahead of its answers (the queue and -j 4's
        // 16 fetches), in batches of 512: the batch holding the dead line (line 3,101) is read
        // only after some 1,000 answers, 5 ms each on 4 lanes. The scout reads the file on
        // its own once the run waits for the network, so the 0.5 s probe gives the host up
        // with at most a few hundred answers in, before the run has read the dead line.
        let urls = liveURLs(3100, on: server, delay: .milliseconds(5)) + [dead.url("/far.png")]
        let fetcher = try fetcher {
            $0.concurrency = 4
            $0.timeout = .milliseconds(500)
            $0.retries = 0
        }
        let list = directory.write(urls.joined(separator: "\n"), to: "far-dead.txt")
        let run = FetchRun(fetcher: fetcher, sources: [.file(list)])
        var results: [FetchResult] = []
        var linesReadWhenDown: Int?
        await run.run(reader: URLListReader(sources: run.sources)) { event in
            guard case .results(let batch) = event else { return }
            if linesReadWhenDown == nil, fetcher.downHosts.contains(where: { $0.host.hasSuffix(":\(dead.port)") }) {
                linesReadWhenDown = run.progress.snapshot.lookedUp
            }
            results += batch
        }

        let linesRead = try #require(linesReadWhenDown, "the dead host was never given up")
        #expect(linesRead < urls.count, "given up once \(linesRead) lines were read")
        #expect(results.first { $0.url == dead.url("/far.png") }?.failure?.kind == .hostDown)
        #expect(results.filter { $0.status == .downloaded }.count == 3100)
    }
}
