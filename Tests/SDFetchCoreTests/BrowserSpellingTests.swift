import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// What the server sees for URLs written as people paste them: the request target a
/// browser sends (<doc:Fetching#URL-identity>), and one request per encoded URL.
@Suite("Browser spellings", .cleansUp, .timeLimit(.minutes(1)))
struct BrowserSpellingTests {
    let directory = TemporaryDirectory("spelling")

    @Test(
        "each spelling is sent as a browser sends it",
        arguments: [
            ("/David H. Anderson_2008.jpg", "/David%20H.%20Anderson_2008.jpg"),
            ("/dir\\a.png", "/dir/a.png"),
            ("/caf\u{E9}.png", "/caf%C3%A9.png"),
            ("/x.png?q=a b'c", "/x.png?q=a%20b%27c"),
            ("/{x}.png", "/%7Bx%7D.png"),
        ])
    func sentAsBrowsersSend(spelling: String, target: String) async throws {
        let server = try await LoopbackServer()
        server.route(target, .ok(SampleImages.png()))
        let fetcher = try Fetcher.forTesting(in: directory)
        let result = try await fetcher.fetch(url: server.url(spelling))
        #expect(result.status == .downloaded)
        #expect(server.recordedRequests.map(\.path) == [target])
        #expect(result.url == server.url(spelling))  // reported as written
    }

    @Test("spellings that encode alike share one request and one key")
    func oneRequestPerEncodedURL() async throws {
        let server = try await LoopbackServer()
        server.route("/a%20b/%C3%A4.png", .ok(SampleImages.png()))
        let spellings = ["/a b/\u{E4}.png", "/a%20b/%C3%A4.png", "/a b\\\u{E4}.png", "/a%20b/\u{E4}.png"]
        let list = directory.write(
            spellings.map { "  " + server.url($0) + " " }.joined(separator: "\n") + "\n", to: "list.txt")
        let fetcher = try Fetcher.forTesting(in: directory)
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
        #expect(server.recordedRequests.map(\.path) == ["/a%20b/%C3%A4.png"])
        #expect(collected.results.map(\.status) == [.downloaded])
        #expect(collected.summary.duplicates == 3)
    }

    @Test("a URL with a control character inside stays invalid and is not requested")
    func controlCharacterIsInvalid() async throws {
        let server = try await LoopbackServer()
        server.route("/a%01b.png", .ok(SampleImages.png()))
        let list = directory.write(server.url("/a\u{1}b.png") + "\n", to: "list.txt")
        let fetcher = try Fetcher.forTesting(in: directory)
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
        #expect(collected.results.map(\.status) == [.invalid])
        #expect(server.totalRequests == 0)
    }

    @Test("two URLs whose queries hold different passwords are two requests")
    func queryPasswordsAreNotCoalesced() async throws {
        let server = try await LoopbackServer()
        let one = "/x.png?src=http://u:ONE@origin/a.png"
        let two = "/x.png?src=http://u:TWO@origin/a.png"
        server.route(one, .ok(SampleImages.png(seed: 1)))
        server.route(two, .ok(SampleImages.png(seed: 2)))
        let list = directory.write(server.url(one) + "\n" + server.url(two) + "\n", to: "list.txt")
        let fetcher = try Fetcher.forTesting(in: directory)
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
        #expect(server.requests(for: one) == 1)
        #expect(server.requests(for: two) == 1)
        #expect(collected.results.map(\.status) == [.downloaded, .downloaded])
        let paths = Set(collected.results.compactMap(\.path))
        #expect(paths.count == 2)
    }
}
