import Foundation
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

/// The getting-started article's examples run against a local server, and the article shows
/// them exactly as compiled (`GettingStartedExamples.swift`), so neither can drift.
@Suite("Getting started examples", .cleansUp, .timeLimit(.minutes(1)))
struct GettingStartedTests {
    let directory = TemporaryDirectory("getting-started")

    @Test("fetching one URL stores it, and a second call is a cache hit")
    func fetchOneURL() async throws {
        let server = try await LoopbackServer()
        server.route("/cat.png", .ok(SampleImages.png()))
        let cache = directory.appending("cache")
        let first = try await fetchOne(server.url("/cat.png"), cacheDirectory: cache)
        let second = try await fetchOne(server.url("/cat.png"), cacheDirectory: cache)
        #expect(first.status == .downloaded && second.status == .cached)
        #expect(server.requests(for: "/cat.png") == 1)
        let path = try #require(second.path)
        #expect(FileManager.default.contents(atPath: path) == Data(SampleImages.png()))
        #expect(try await fetchOne("not a url", cacheDirectory: cache).status == .invalid)
    }

    @Test("a list in memory is fetched once per key, with progress, and the cap kept")
    func fetchInMemoryList() async throws {
        let server = try await LoopbackServer()
        for index in 0..<5 { server.route("/\(index).png", .ok(SampleImages.png(seed: index))) }
        let urls = (0..<5).map { server.url("/\($0).png") } + [server.url("/0.png#again"), "  ", "# a comment", "nope"]
        let lines = ReportedLines()
        let summary = try await fetchList(urls, cacheDirectory: directory.appending("cache")) { line in
            lines.value.withLock { $0.append(line) }
        }
        #expect(lines.value.withLock { $0.filter { $0.hasPrefix("downloaded ") }.count } == 5)
        #expect(summary.count(.downloaded) == 5 && summary.count(.invalid) == 1 && summary.duplicates == 1)
        #expect(server.totalRequests == 5)
        #expect(summary.requests == 5)
        // Printable as the command's closing line, and with the time when given one.
        #expect("\(summary)".hasPrefix("6 URLs: 5 downloaded, 1 invalid; 1 duplicate coalesced; "), "\(summary)")
        #expect(summary.line(elapsed: .milliseconds(1250)).hasSuffix(" downloaded in 1.2 s"))
        #expect(!"\(summary)".contains("[") && !"\(summary)".contains("usedKeys"))
    }

    @Test("a one-URL summary leaves out the duplicates it could not have")
    func oneURLSummary() {
        var summary = RunSummary()
        summary.counts[.downloaded] = 1
        #expect(summary.description == "1 URL: 1 downloaded; 0 B downloaded")
        summary.duplicates = 2
        #expect(summary.description == "1 URL: 1 downloaded; 2 duplicates coalesced; 0 B downloaded")
    }

    @Test("the default cache folder is the command's: SDFETCH_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache")
    func defaultCacheFolder() {
        #expect(DiskCache.defaultDirectory(environment: ["SDFETCH_CACHE_DIR": "/c", "HOME": "/h"]) == "/c")
        #expect(DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"]) == "/x/sdfetch")
        #expect(
            DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "rel", "HOME": "/h"]) == "/h/.cache/sdfetch")
    }

    @Test("an AsyncSequence of URLs is fetched as it yields them")
    func fetchFromAsyncSequence() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let (stream, producer) = AsyncStream.makeStream(of: String.self)
        producer.yield(server.url("/a.png"))
        let run = Task { try await fetchStream(stream, cacheDirectory: directory.appending("cache")) }
        // The first URL is fetched before the producer sends the second.
        #expect(await server.waitForRequests(1))
        producer.yield(server.url("/b.png"))
        producer.yield(server.url("/a.png"))
        producer.finish()
        let results = try await run.value
        #expect(results.map(\.status) == [.downloaded, .downloaded])
        #expect(server.totalRequests == 2)
    }

    @Test("cleaning removes what is older than the age given")
    func cleanOldEntries() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let cache = directory.appending("cache")
        _ = try await fetchOne(server.url("/a.png"), cacheDirectory: cache)
        #expect(try cleanCache(cache).removedEntries == 0)
        let stale = try DiskCache(directory: cache, now: { Date().addingTimeInterval(2 * 86_400) })
        #expect(try stale.clean(maxAge: .seconds(86_400), maxSize: nil, dryRun: false).removedEntries == 1)
    }

    @Test("the article shows each example exactly as it is compiled")
    func articleMatchesCompiledExamples() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(
            contentsOf: here.appendingPathComponent("GettingStartedExamples.swift"), encoding: .utf8)
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/SDFetchCore/SDFetchCore.docc/GettingStarted.md"),
            encoding: .utf8)
        let examples = Self.examples(in: source)
        #expect(examples.count == 4)
        let blocks = Self.swiftBlocks(in: article)
        for (name, code) in examples {
            #expect(blocks.contains(code), "the article does not show the example \(name) as compiled")
        }
    }

    /// `// example: NAME` ... `// end example` spans, by name.
    static func examples(in source: String) -> [(String, String)] {
        var found: [(String, String)] = []
        var current: (name: String, lines: [Substring])?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("// example: ") {
                current = (String(line.dropFirst("// example: ".count)), [])
            } else if line == "// end example", let done = current {
                found.append((done.name, done.lines.joined(separator: "\n")))
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return found
    }

    /// The bodies of the ```swift blocks.
    static func swiftBlocks(in article: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in article.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```swift" {
                current = []
            } else if line == "```", let done = current {
                blocks.append(done.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }
}

/// The lines an example hands its caller, collected from the run's tasks.
private final class ReportedLines: Sendable {
    let value = Mutex<[String]>([])
}
