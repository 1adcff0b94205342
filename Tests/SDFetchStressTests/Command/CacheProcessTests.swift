import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Real `sdfetch` processes on one cache directory: `kill -9` mid-run, and two fetches
/// with a concurrent `clean`. What counts is what is on disk afterwards.
@Suite("Cache shared by processes", .cleansUp, .timeLimit(.minutes(1)))
struct CacheProcessTests {
    let directory = TemporaryDirectory("procs")

    /// A distinct valid PNG per index (the seed byte alone repeats after 256).
    static func body(_ index: Int) -> [UInt8] { SampleImages.png(width: 4 + index / 256, seed: index) }

    /// `distinct` images over `count` URLs: with fewer, URLs share bytes, so entries share files.
    private func serve(
        _ count: Int, distinct: Int? = nil, delay: (Int) -> Duration
    ) async throws
        -> (LoopbackServer, [String: [UInt8]])
    {
        let server = try await LoopbackServer()
        var bodies: [String: [UInt8]] = [:]
        for index in 0..<count {
            let body = Self.body(index % (distinct ?? count))
            server.route("/p/\(index).png", ScriptedResponse(status: 200, body: body, delay: delay(index)))
            bodies[server.url("/p/\(index).png")] = body
        }
        return (server, bodies)
    }

    private func launch(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private var cachePath: String { directory.appending("cache") }

    /// Paths of every entry file in the cache (named by a 32-digit hex digest).
    private func entryFiles() -> [String] {
        let entries = cachePath + "/entries"
        let all = FileManager.default.enumerator(atPath: entries)?.compactMap { $0 as? String } ?? []
        return all.filter { $0.utf8.count == 35 && !$0.hasSuffix(".tmp") }.map { entries + "/" + $0 }
    }

    /// Temporary files anywhere in the cache: in `tmp/` or left in a bucket folder.
    private func temporaryFiles() -> [String] {
        let all = FileManager.default.enumerator(atPath: cachePath)?.compactMap { $0 as? String } ?? []
        return all.filter { $0.hasSuffix(".tmp") }
    }

    /// Every visible entry is complete: its metadata parses and its body equals what the
    /// server serves for its URL. Returns the number of entries.
    private func expectConsistent(_ bodies: [String: [UInt8]]) throws -> Int {
        let cache = try DiskCache(directory: cachePath)
        var complete = 0
        for (url, body) in bodies {
            let key = try URLKey(parsing: url)
            guard let entry = cache.entry(for: key) else { continue }
            complete += 1
            #expect(entry.bytes == Int64(body.count))
            #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(body), "\(url)")
        }
        #expect(complete == entryFiles().count, "every entry file has its metadata")
        return complete
    }

    /// Every content file still links an entry's file: none is left alone after a clean.
    private func expectNoLoneContent() {
        let content = cachePath + "/content"
        let all = FileManager.default.enumerator(atPath: content)?.compactMap { $0 as? String } ?? []
        for name in all where name.utf8.count == 67 {
            let links =
                (try? FileManager.default.attributesOfItem(atPath: content + "/" + name))?[.referenceCount] as? Int
            #expect((links ?? 0) >= 2, "\(name)")
        }
    }

    /// Cleans with a clock two hours ahead, so every temporary file counts as stray.
    private func finalClean() throws -> CleanReport {
        let later = Date().addingTimeInterval(7200)
        return try DiskCache(directory: cachePath, now: { later }).clean(
            maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
    }

    @Test("kill -9 during a 300-URL run leaves only complete entries, shared files or not", arguments: [nil, 30])
    func killNine(distinct: Int?) async throws {
        // Slow enough (about thirteen seconds at -j 4, ten times that under ThreadSanitizer)
        // that the kill lands mid-run even when the whole suite beside it keeps this loop's
        // directory walks waiting for seconds; the kill comes after about two.
        let (server, bodies) = try await serve(300, distinct: distinct) {
            ThreadSanitizer.scaled(.milliseconds(150 + $0 % 40))
        }
        let list = directory.write(bodies.keys.sorted().joined(separator: "\n"), to: "list.txt")
        let process = try launch(["--cache-dir", cachePath, "-j", "4", list])
        let deadline = ContinuousClock.now + .seconds(20)
        while entryFiles().count < 40 && process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        kill(process.processIdentifier, SIGKILL)
        await process.exited()

        #expect(process.terminationReason == .uncaughtSignal)
        #expect(server.totalRequests >= 40)
        let entries = try expectConsistent(bodies)
        #expect(entries >= 40 && entries < 300)
        _ = try finalClean()
        #expect(temporaryFiles().isEmpty)
        #expect(try expectConsistent(bodies) == entries)
        expectNoLoneContent()
    }

    @Test(
        "two fetch processes and a concurrent clean leave a consistent cache, shared files or not",
        arguments: [nil, 20])
    func twoFetchesAndClean(distinct: Int?) async throws {
        // Slow enough (about four seconds a process at -j 6) that the fetches outlast a clean:
        // a clean of this small cache took up to 2.4 s on a loaded machine, which once let
        // both fetches end within the first clean.
        let (server, bodies) = try await serve(200, distinct: distinct) { .milliseconds(100 + $0 % 40) }
        let urls = bodies.keys.sorted()
        var random = SeededRandom("two fetch processes")
        let first = directory.write(urls.shuffled(using: &random).joined(separator: "\n"), to: "a.txt")
        let second = directory.write(urls.shuffled(using: &random).joined(separator: "\n"), to: "b.txt")
        let processes = [
            try launch(["--cache-dir", cachePath, "-j", "6", first]),
            try launch(["--cache-dir", cachePath, "-j", "6", second]),
        ]
        // Small enough that every clean evicts while the fetches store.
        let cap = Int64(Self.body(0).count + 300) * 50
        let cache = try DiskCache(directory: cachePath)
        var cleans = 0
        var evicted = 0
        while processes.contains(where: \.isRunning) {
            evicted += try cache.clean(maxAge: .seconds(7 * 86400), maxSize: cap, dryRun: false).removedEntries
            cleans += 1
        }
        for process in processes { await process.exited() }

        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        #expect(cleans > 1 && evicted > 0)
        #expect(server.totalRequests >= 200)
        _ = try expectConsistent(bodies)
        let report = try finalClean()
        #expect(report.entries == entryFiles().count)
        #expect(temporaryFiles().isEmpty)
        _ = try expectConsistent(bodies)
        expectNoLoneContent()
    }
}
