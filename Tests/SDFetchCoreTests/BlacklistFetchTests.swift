import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The blacklist as the fetcher uses it: `skipped` without a request, `--retry-failed`,
/// expiry by `--max-age`, transient failures never recorded.
@Suite("Blacklist in the fetcher", .cleansUp, .timeLimit(.minutes(1)))
struct BlacklistFetchTests {
    let directory = TemporaryDirectory("skip")
    let clock = ManualClock()

    private func fetch(_ url: String, retryFailed: Bool = false, maxBytes: Int64? = nil) async throws -> FetchResult {
        var options = FetchOptions()
        options.retryFailed = retryFailed
        if let maxBytes { options.maxBytes = maxBytes }
        options.retries = 0
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
        let fetcher = Fetcher.scoped(options: options, cache: cache, now: clock.read)
        return await fetcher.fetch(try URLKey(parsing: url), spelling: url)
    }

    private func record(_ url: String) throws -> FailureRecord? {
        FailureBlacklist(cache: try DiskCache(directory: directory.appending("cache"))).record(
            for: try URLKey(parsing: url))
    }

    @Test("a recorded URL is skipped without a request and carries the recorded failure")
    func skippedWithoutRequest() async throws {
        let server = try await LoopbackServer()
        let first = try await fetch(server.url("/gone.png"))
        let second = try await fetch(server.url("/gone.png"))

        #expect(first.status == .failed && first.failure?.kind == .http(404))
        #expect(second.status == .skipped && second.failure == first.failure)
        #expect(server.requests(for: "/gone.png") == 1)
    }

    @Test("too-large under a limit below the default is not recorded; the usual limit fetches it")
    func stricterLimitRecordsNothing() async throws {
        let server = try await LoopbackServer()
        server.route("/big.png", .ok(SampleImages.png()))
        let strict = try await fetch(server.url("/big.png"), maxBytes: 16)
        #expect(strict.status == .failed && strict.failure?.kind == .tooLarge)
        #expect(try record(server.url("/big.png")) == nil)
        #expect(try await fetch(server.url("/big.png")).status == .downloaded)
    }

    @Test("--retry-failed sends the request, and a success removes the record")
    func retryFailedClearsRecord() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(Array("<html>oops</html>".utf8)), .ok(SampleImages.png()))
        #expect(try await fetch(server.url("/a.png")).failure?.kind == .notAnImage)
        #expect(try record(server.url("/a.png"))?.kind == .notAnImage)
        let retried = try await fetch(server.url("/a.png"), retryFailed: true)

        #expect(retried.status == .downloaded)
        #expect(try record(server.url("/a.png")) == nil)
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("a record older than max-age no longer skips")
    func recordExpires() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .status(410), .ok(SampleImages.png()))
        _ = try await fetch(server.url("/a.png"))
        clock.advance(by: .seconds(7 * 86400))
        let later = try await fetch(server.url("/a.png"))

        #expect(later.status == .downloaded)
        #expect(try record(server.url("/a.png")) == nil)
    }

    @Test("a transient failure is never recorded")
    func transientNotRecorded() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .status(503), .ok(SampleImages.png()))
        #expect(try await fetch(server.url("/a.png")).failure?.kind == .http(503))
        #expect(try record(server.url("/a.png")) == nil)
        #expect(try await fetch(server.url("/a.png")).status == .downloaded)
    }
}
