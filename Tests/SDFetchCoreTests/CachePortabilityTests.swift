import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// A cache saved and restored the ways CI cache steps do it stays warm: no request, the
/// stored times (so freshness) and validators as they were.
@Suite("Cache portability", .cleansUp, .timeLimit(.minutes(1)))
struct CachePortabilityTests {
    let directory = TemporaryDirectory("portable")
    let clock = ManualClock()

    /// The archive tools as CI cache steps call them: never with extended attributes.
    static let roundTrips: [(name: String, save: [[String]], restore: [[String]])] = [
        (
            "tar", [["tar", "cf", "ARCHIVE", "-C", "SOURCE", "."]],
            [["mkdir", "-p", "TARGET"], ["tar", "xf", "ARCHIVE", "-C", "TARGET"]]
        ),
        (
            "zip", [["sh", "-c", "cd SOURCE && zip -qr ARCHIVE ."]],
            [["mkdir", "-p", "TARGET"], ["unzip", "-q", "ARCHIVE", "-d", "TARGET"]]
        ),
        ("cp -r", [["cp", "-r", "SOURCE", "ARCHIVE"]], [["cp", "-r", "ARCHIVE", "TARGET"]]),
        ("rsync -a", [["rsync", "-a", "SOURCE/", "ARCHIVE/"]], [["rsync", "-a", "ARCHIVE/", "TARGET/"]]),
    ]

    private func run(_ argv: [String], _ substitutions: [String: String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv.map { word in
            substitutions.reduce(word) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        try process.run()
        await process.exited()
        #expect(process.terminationStatus == 0, "\(argv.joined(separator: " ")) failed")
    }

    private func fetchAll(
        _ urls: [String], cache: String, _ configure: (inout FetchOptions) -> Void = { _ in }
    )
        async throws -> [FetchResult]
    {
        var options = FetchOptions()
        configure(&options)
        let fetcher = Fetcher.scoped(
            options: options, cache: try DiskCache(directory: cache, now: clock.read), now: clock.read)
        var results: [FetchResult] = []
        for url in urls { results.append(try await fetcher.fetch(url: url)) }
        return results
    }

    @Test("a restored copy sends no request and keeps freshness and validators", arguments: [0, 1, 2, 3])
    func restoredCopyIsWarm(_ which: Int) async throws {
        let tool = Self.roundTrips[which]
        if tool.name == "rsync -a" && !FileManager.default.fileExists(atPath: "/usr/bin/rsync") {
            Issue.record("rsync is not installed (Scripts/install-deps.sh installs it)")
            return
        }
        let server = try await LoopbackServer()
        let urls = (0..<12).map { server.url("/p/\($0).png") }
        for index in 0..<12 {
            server.route(
                "/p/\(index).png", .ok(SampleImages.png(seed: index), headers: [("ETag", "\"e\(index)\"")]),
                ScriptedResponse(status: 304, headers: [("ETag", "\"e\(index)\"")]))
        }
        let source = directory.appending("source")
        #expect(try await fetchAll(urls, cache: source).allSatisfy { $0.status == .downloaded })
        let stored = try DiskCache(directory: source, now: clock.read).entry(for: try URLKey(parsing: urls[0]))

        // Hours pass between the CI job that saved the cache and the one that restores it.
        clock.advance(by: .seconds(3 * 3600))
        let substitutions = [
            "ARCHIVE": directory.appending("archive-\(which)"), "SOURCE": source,
            "TARGET": directory.appending("restored"),
        ]
        for argv in tool.save { try await run(argv, substitutions) }
        try FileManager.default.removeItem(atPath: source)
        for argv in tool.restore { try await run(argv, substitutions) }
        let restored = directory.appending("restored")

        let warm = try await fetchAll(urls, cache: restored)
        #expect(warm.allSatisfy { $0.status == .cached }, "\(tool.name): \(warm.map(\.status))")
        #expect(server.totalRequests == 12)
        let entry = try DiskCache(directory: restored, now: clock.read).entry(for: try URLKey(parsing: urls[0]))
        #expect(entry?.storedAt == stored?.storedAt && entry?.etag == "\"e0\"")

        // Freshness still counts from the original store: a week later they are stale and
        // revalidated with the validators that came through the copy.
        clock.advance(by: .seconds(7 * 86400))
        let revalidated = try await fetchAll(urls, cache: restored)
        #expect(revalidated.allSatisfy { $0.status == .revalidated })
        #expect(server.recordedRequests.last?.header("If-None-Match") == "\"e11\"")
    }

    @Test(
        "entries sharing one file survive every copy: tar keeps the sharing, the others make plain files",
        arguments: [0, 1, 2, 3])
    func sharedFilesSurviveCopies(_ which: Int) async throws {
        let tool = Self.roundTrips[which]
        if tool.name == "rsync -a" && !FileManager.default.fileExists(atPath: "/usr/bin/rsync") {
            Issue.record("rsync is not installed (Scripts/install-deps.sh installs it)")
            return
        }
        let server = try await LoopbackServer()
        // A CDN alias pair and a query-string variant: one image under three URLs.
        let image = SampleImages.png(seed: 40)
        for path in ["/cdn1/a.png", "/cdn2/a.png", "/other.png"] {
            server.route(path, .ok(path == "/other.png" ? SampleImages.png(seed: 41) : image))
        }
        let urls = [
            server.url("/cdn1/a.png"), server.url("/cdn2/a.png"), server.url("/cdn1/a.png?v=2"),
            server.url("/other.png"),
        ]
        server.route("/cdn1/a.png?v=2", .ok(image))
        let source = directory.appending("source")
        #expect(try await fetchAll(urls, cache: source).allSatisfy { $0.status == .downloaded })
        #expect(try DiskCache.stats(directory: source).savedBytes == Int64(image.count) * 2)

        let substitutions = [
            "ARCHIVE": directory.appending("archive-\(which)"), "SOURCE": source,
            "TARGET": directory.appending("restored"),
        ]
        for argv in tool.save { try await run(argv, substitutions) }
        try FileManager.default.removeItem(atPath: source)
        for argv in tool.restore { try await run(argv, substitutions) }
        let restored = directory.appending("restored")

        let warm = try await fetchAll(urls, cache: restored)
        #expect(warm.allSatisfy { $0.status == .cached }, "\(tool.name): \(warm.map(\.status))")
        #expect(server.totalRequests == 4)
        // tar keeps hard links; zip, cp -r and rsync -a (no -H) write each name as a file.
        let stats = try DiskCache.stats(directory: restored)
        #expect(stats.savedBytes == (tool.name == "tar" ? Int64(image.count) * 2 : 0), "\(tool.name)")
        #expect(stats.entries == 4)
        let cache = try DiskCache(directory: restored, now: clock.read)
        #expect(cache.verify().removed.isEmpty)
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let again = try await fetchAll(urls, cache: restored)
        #expect(again.allSatisfy { $0.status == .cached }, "\(tool.name): \(again.map(\.status))")
        #expect(server.totalRequests == 4)
    }
}
