import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The fetcher's cache decisions against a real loopback server: warm hits, conditional
/// requests, `--refresh`, `--offline`.
@Suite("Cache decisions in the fetcher", .cleansUp, .timeLimit(.minutes(1)))
struct RevalidationTests {
    let directory = TemporaryDirectory("revalidate")
    let clock = ManualClock()
    static let week: Duration = .seconds(7 * 86400)

    private func fetcher(_ configure: (inout FetchOptions) -> Void = { _ in }) throws -> Fetcher {
        try Fetcher.forTesting(in: directory, now: clock.read, configure)
    }

    private func fetch(_ url: String, _ configure: (inout FetchOptions) -> Void = { _ in }) async throws -> FetchResult
    {
        let fetcher = try fetcher(configure)
        return try await fetcher.fetch(url: url)
    }

    @Test("a warm run over fresh entries sends no request")
    func warmRunSendsNothing() async throws {
        let server = try await LoopbackServer()
        let urls = (0..<40).map { server.url("/w/\($0).png") }
        for index in 0..<40 { server.route("/w/\(index).png", .ok(SampleImages.png(seed: index))) }
        let list = directory.write(urls.joined(separator: "\n"), to: "list.txt")
        for expected in [FetchStatus.downloaded, .cached] {
            let fetcher = try fetcher()
            let run = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
            #expect(run.results.count == 40 && run.results.allSatisfy { $0.status == expected })
            #expect(run.summary.usedKeys.count == 40)
        }
        #expect(server.totalRequests == 40)
    }

    @Test("a 304 renews a stale entry, and the server saw both validators")
    func notModifiedRenews() async throws {
        let server = try await LoopbackServer()
        let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
        server.route(
            "/a.png", .ok(SampleImages.png(seed: 1), headers: [("ETag", "\"v1\""), ("Last-Modified", lastModified)]),
            ScriptedResponse(status: 304, headers: [("ETag", "\"v1\"")]))
        #expect(try await fetch(server.url("/a.png")).status == .downloaded)
        clock.advance(by: Self.week)
        let result = try await fetch(server.url("/a.png"))

        #expect(result.status == .revalidated && result.httpStatus == 304)
        let second = try #require(server.recordedRequests.last)
        #expect(second.header("If-None-Match") == "\"v1\"")
        #expect(second.header("If-Modified-Since") == lastModified)
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
        let entry = try #require(cache.entry(for: try URLKey(parsing: server.url("/a.png"))))
        #expect(entry.storedAt == clock.now && entry.bytes == Int64(SampleImages.png(seed: 1).count))
        let path = try #require(result.path)
        #expect(FileManager.default.contents(atPath: path) == Data(SampleImages.png(seed: 1)))
    }

    @Test("a 200 on revalidation replaces the entry")
    func changedBodyReplaces() async throws {
        let server = try await LoopbackServer()
        server.route(
            "/a.png", .ok(SampleImages.png(seed: 1), headers: [("ETag", "\"v1\"")]),
            .ok(SampleImages.png(width: 6, height: 6, seed: 2), headers: [("ETag", "\"v2\"")]))
        _ = try await fetch(server.url("/a.png"))
        clock.advance(by: Self.week)
        let result = try await fetch(server.url("/a.png"))

        #expect(result.status == .downloaded)
        #expect(server.recordedRequests.last?.header("If-None-Match") == "\"v1\"")
        let path = try #require(result.path)
        #expect(FileManager.default.contents(atPath: path) == Data(SampleImages.png(width: 6, height: 6, seed: 2)))
        let cache = try DiskCache(directory: directory.appending("cache"))
        #expect(cache.entry(for: try URLKey(parsing: server.url("/a.png")))?.etag == "\"v2\"")
    }

    @Test("--refresh revalidates a fresh entry")
    func refreshRevalidatesFresh() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(), headers: [("ETag", "\"v1\"")]), ScriptedResponse(status: 304))
        _ = try await fetch(server.url("/a.png"))
        let result = try await fetch(server.url("/a.png")) { $0.refresh = true }

        #expect(result.status == .revalidated)
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("--offline serves a stale entry and fails a miss as offline-miss, without requests")
    func offline() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        _ = try await fetch(server.url("/a.png"))
        clock.advance(by: .seconds(30 * 86400))
        let stale = try await fetch(server.url("/a.png")) { $0.offline = true }
        let miss = try await fetch(server.url("/b.png")) { $0.offline = true }

        #expect(stale.status == .cached)
        #expect(miss.status == .failed && miss.failure?.kind == .offlineMiss)
        #expect(server.totalRequests == 1)
    }

    @Test("a stale entry without validators is fetched again in full")
    func staleWithoutValidators() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        _ = try await fetch(server.url("/a.png"))
        clock.advance(by: Self.week)
        let result = try await fetch(server.url("/a.png"))

        #expect(result.status == .downloaded)
        #expect(server.recordedRequests.last?.header("If-None-Match") == nil)
        #expect(server.recordedRequests.last?.header("If-Modified-Since") == nil)
    }
}
