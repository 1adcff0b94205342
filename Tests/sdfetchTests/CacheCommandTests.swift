import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `stats`, `clean`, `path` and `failed` with the built binary on a cache filled by a real fetch.
@Suite("sdfetch cache commands, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct CacheCommandTests {
    let directory = TemporaryDirectory("cachecmd")
    var cache: String { directory.appending("cache") }

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments, input: input)
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Fetches one good and one missing URL into the cache; returns their URLs.
    private func fill() async throws -> (good: String, missing: String) {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let urls = (server.url("/a.png"), server.url("/missing.png"))
        let run = try await sdfetch(["--cache-dir", cache], input: urls.0 + "\n" + urls.1 + "\n")
        try await server.shutdown()  // what the cache commands do next needs no server
        #expect(run.status == 1)
        return urls
    }

    @Test("stats on a directory that does not exist reports zeros, exits 0 and creates nothing")
    func statsOfNothing() async throws {
        let run = try await sdfetch(["stats", "--json", "--cache-dir", cache])
        #expect(run.status == 0)
        let object = try json(run.standardOutput)
        #expect(object["entries"] as? Int == 0 && object["bytes"] as? Int == 0 && object["failed"] as? Int == 0)
        #expect(object["oldest"] is NSNull && object["newest"] is NSNull)
        #expect((object["formats"] as? [String: Int])?.isEmpty == true)
        #expect(!FileManager.default.fileExists(atPath: cache))
    }

    @Test("clean and verify never make a cache: none there is nothing to do, someone's folder an error")
    func maintenanceNeedsACache() async throws {
        let foreign = directory.appending("documents")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try "mine".write(toFile: foreign + "/notes.txt", atomically: true, encoding: .utf8)
        for command in ["clean", "verify"] {
            let missing = try await ProcessRun.sdfetch([command, "--cache-dir", cache])
            #expect(missing.status == 0 && missing.standardError.contains("no cache at"), "\(missing.standardError)")
            #expect(!FileManager.default.fileExists(atPath: cache))
            let wrong = try await ProcessRun.sdfetch([command, "--cache-dir", foreign])
            #expect(wrong.status == 3 && wrong.standardError.contains("is not an sdfetch cache"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: foreign) == ["notes.txt"])
        }
    }

    @Test("stats --json counts entries, formats, dates and failure records")
    func stats() async throws {
        _ = try await fill()
        let object = try json(try await sdfetch(["stats", "--cache-dir", cache, "--json"]).standardOutput)
        #expect(object["entries"] as? Int == 1)
        // On disk the entry's index line comes on top of the image.
        #expect((object["bytes"] as? Int ?? 0) > SampleImages.png().count)
        #expect(object["image_bytes"] as? Int == SampleImages.png().count)
        #expect(object["formats"] as? [String: Int] == ["png": 1])
        #expect(object["failed"] as? Int == 1)
        let oldest = try #require(object["oldest"] as? String)
        #expect(try Date(oldest, strategy: .iso8601).timeIntervalSinceNow > -60)
    }

    @Test("the options every command shares may come first: --cache-dir X stats runs stats")
    func sharedOptionsBeforeCommand() async throws {
        _ = try await fill()
        let run = try await sdfetch(["--cache-dir", cache, "--no-config", "stats"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("entries  1\n"))
        #expect(run.standardOutput.contains(" of images, the rest index)"))
        let config = directory.write("json = true\n", to: "config")
        let json = try await sdfetch(["--config", config, "-q", "stats", "--cache-dir", cache])
        #expect(json.status == 0 && json.standardOutput.hasPrefix("{"), "\(json.standardError)")
    }

    @Test("path prints the cache file of a URL with an entry and exits 1 when one has none")
    func path() async throws {
        let urls = try await fill()
        let found = try await sdfetch(["path", "--cache-dir", cache, urls.good])
        let mixed = try await sdfetch(["path", "--cache-dir", cache, urls.good, urls.missing])
        #expect(found.status == 0)
        let file = found.standardOutput.trimmingCharacters(in: .newlines)
        #expect(FileManager.default.contents(atPath: file) == Data(SampleImages.png()))
        #expect(mixed.status == 1 && mixed.standardOutput == found.standardOutput)
        #expect(mixed.standardError.contains("no cache entry for \(urls.missing)"))
    }

    @Test("failed list shows the record, remove forgets it, and the next fetch asks the server again")
    func failedRecords() async throws {
        let urls = try await fill()
        let list = try await sdfetch(["failed", "list", "--cache-dir", cache])
        #expect(list.status == 0)
        #expect(list.standardOutput.hasPrefix(urls.missing + "\thttp-404\t"))
        let skipped = try await sdfetch(["--cache-dir", cache], input: urls.missing + "\n")
        #expect(skipped.standardOutput.hasPrefix("skipped\t-\t"))
        // The record keeps the status it failed with; there was no request this time.
        let skippedJSON = try await sdfetch(["--cache-dir", cache, "--json"], input: urls.missing + "\n")
        let object = try json(skippedJSON.standardOutput.components(separatedBy: "\n")[0])
        #expect(object["status"] as? String == "skipped" && object["http_status"] as? Int == 404)
        #expect(object["error"] as? String == "http-404")
        let removed = try await sdfetch(["failed", "remove", "--cache-dir", cache, urls.missing])
        #expect(removed.status == 0 && removed.standardOutput == "sdfetch: removed 1 failed-URL record\n")
        #expect(try await sdfetch(["failed", "list", "--cache-dir", cache]).standardOutput.isEmpty)
        #expect(
            try await sdfetch(["failed", "clear", "--cache-dir", cache]).standardOutput
                == "sdfetch: removed 0 failed-URL records\n")
    }

    @Test("clean --dry-run lists without removing; clean --json reports what it removed and what remains")
    func clean() async throws {
        let urls = try await fill()
        let dry = try await sdfetch(["clean", "--cache-dir", cache, "--max-age", "0", "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.standardOutput.contains(urls.good + "\n"))
        #expect(dry.standardOutput.contains("sdfetch: clean: would remove 1 entry"))
        #expect(try await sdfetch(["path", "--cache-dir", cache, urls.good]).status == 0)
        let real = try await sdfetch(["clean", "--max-age=0", "--json", "--cache-dir", cache])
        let object = try json(real.standardOutput)
        #expect(object["removed_entries"] as? Int == 1 && object["removed_failed"] as? Int == 1)
        #expect((object["removed_bytes"] as? Int ?? 0) > 0 && object["removed_temp"] as? Int == 0)
        #expect(object["entries"] as? Int == 0 && object["bytes"] as? Int == 0)
        // Each step with what it removed and its time: the bucket sweep took the entry, the
        // records' step the failure record.
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.map { $0["name"] as? String } == ["temporaries", "buckets", "content", "failed", "hosts"])
        #expect(steps.map { $0["removed"] as? Int } == [0, 1, 0, 1, 0])
        #expect(steps.allSatisfy { ($0["seconds"] as? Double ?? -1) >= 0 })
        #expect(try await sdfetch(["path", "--cache-dir", cache, urls.good]).status == 1)
        // Nothing left to remove: nothing said, with or without -q (cron mails any output).
        let again = try await sdfetch(["clean", "--cache-dir", cache])
        #expect(again.status == 0 && again.standardOutput.isEmpty && again.standardError.isEmpty, "\(again)")
        let quiet = try await sdfetch(["clean", "-q", "--cache-dir", cache])
        #expect(quiet.status == 0 && quiet.standardOutput.isEmpty && quiet.standardError.isEmpty)
    }

    @Test("--max-cache-size trims the cache after a run")
    func maxCacheSize() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<6).map { "/m\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, .ok(SampleImages.png(width: 32, height: 32, seed: index)))
        }
        let input = paths.map { server.url($0) }.joined(separator: "\n")
        _ = try await sdfetch(["--cache-dir", cache], input: input)
        let full = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        let perEntry = (full["bytes"] as? Int ?? 0) / 6
        let trimmed = try await sdfetch(
            ["--cache-dir", cache, "--max-cache-size", String(perEntry * 3 + perEntry / 2)], input: server.url(paths[0])
        )
        try await server.shutdown()
        #expect(trimmed.status == 0)
        #expect(!trimmed.standardError.contains("warning"), "its one entry fits: nothing to say")
        let after = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        #expect(after["entries"] as? Int == 3)
        #expect(try await sdfetch(["path", "--cache-dir", cache, server.url(paths[0])]).status == 0)
    }

    @Test("clean --max-size keeps the entries a re-run used a moment after they were stored")
    func cleanKeepsJustUsedEntries() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<10).map { "/u\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, .ok(SampleImages.png(width: 32, height: 32, seed: index)))
        }
        let urls = paths.map { server.url($0) }
        #expect(try await sdfetch(["--cache-dir", cache], input: urls.joined(separator: "\n")).status == 0)
        // Seconds later, not the ten minutes that coarsen later uses: the first hit must count.
        let rerun = try await sdfetch(["--cache-dir", cache], input: urls[..<3].joined(separator: "\n"))
        try await server.shutdown()
        #expect(rerun.standardOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("cached\t") })
        let full = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        let perEntry = (full["bytes"] as? Int ?? 0) / 10
        let room = String(perEntry * 5 + perEntry / 2)
        let clean = try await sdfetch(["clean", "--cache-dir", cache, "--max-size", room])
        #expect(clean.status == 0)
        for url in urls[..<3] {
            #expect(try await sdfetch(["path", "--cache-dir", cache, url]).status == 0, "\(url) was removed")
        }
        let after = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        #expect((4...6).contains(after["entries"] as? Int ?? 0))
    }

    @Test(
        "a run whose own entries do not fit under --max-cache-size says so once, with the numbers, also under -q and in --summary"
    )
    func capTooSmallForTheRun() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<6).map { "/t\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, .ok(SampleImages.png(width: 32, height: 32, seed: index)))
        }
        let input = paths.map { server.url($0) }.joined(separator: "\n")
        let entryBytes = SampleImages.png(width: 32, height: 32).count
        // Room for three: each entry also counts its index line, a few hundred bytes at most.
        let cap = (entryBytes + 400) * 3
        let summary = directory.appending("summary.json")
        let run = try await sdfetch(
            ["--cache-dir", cache, "-q", "--max-cache-size", String(cap), "--summary", summary], input: input)
        try await server.shutdown()

        #expect(run.status == 0)
        let warnings = run.standardError.split(separator: "\n").filter { $0.hasPrefix("sdfetch: warning: ") }
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first)
        #expect(warning.contains("this run's 6 cache entries take "))
        #expect(warning.contains("more than --max-cache-size \(ByteCountText.render(Int64(cap))): "))
        #expect(warning.contains(": 3 of them were removed, so the next run downloads them again"))
        #expect(warning.contains("; raise --max-cache-size to at least "))
        let object = try json(try String(contentsOfFile: summary, encoding: .utf8))
        #expect(object["max_cache_size"] as? Int == cap && object["evicted_run_entries"] as? Int == 3)
        #expect((object["run_cache_bytes"] as? Int ?? 0) > entryBytes * 6)
        #expect(object["warnings"] as? [String] == [String(warning.dropFirst("sdfetch: warning: ".count))])
    }

    @Test("verify --json names a corrupted entry, removes it, exits 1; a second verify finds nothing")
    func verify() async throws {
        let urls = try await fill()
        let path = try await sdfetch(["path", "--cache-dir", cache, urls.good]).standardOutput
            .trimmingCharacters(in: .newlines)
        // One byte flipped in place, size unchanged.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 20)
        try handle.write(contentsOf: Data([0xAA]))
        try handle.close()
        let run = try await sdfetch(["verify", "--json", "--cache-dir", cache])
        #expect(run.status == 1)
        let lines = run.standardOutput.split(separator: "\n").map { try? json(String($0)) }
        #expect(lines.first??["url"] as? String == urls.good && lines.first??["status"] as? String == "removed")
        #expect(lines.last??["checked"] as? Int == 1 && lines.last??["removed"] as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: path))
        let again = try await sdfetch(["verify", "--cache-dir", cache])
        #expect(again.status == 0 && again.standardOutput.contains("removed 0"))
    }

    @Test("merge folds two shard caches made by --shard into one that answers the whole list offline")
    func merge() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<8).map { "/s\($0).png" }
        for (index, path) in paths.enumerated() { server.route(path, .ok(SampleImages.png(seed: index))) }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "list.txt")
        for shard in 0..<2 {
            let run = try await sdfetch([
                "--cache-dir", directory.appending("shard\(shard)"), "--shard", "\(shard)/2", list,
            ])
            #expect(run.status == 0)
        }
        try await server.shutdown()
        #expect(server.totalRequests == 8)
        let merged = try await sdfetch([
            "merge", "--cache-dir", cache, directory.appending("shard0"), directory.appending("shard1"),
        ])
        #expect(merged.status == 0 && merged.standardOutput.contains("added"))
        let offline = try await sdfetch(["--offline", "--cache-dir", cache, list])
        #expect(offline.status == 0)
        #expect(offline.standardOutput.split(separator: "\n").count == 8)
        #expect(offline.standardOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("cached\t") })
        let missing = try await sdfetch(["merge", "--cache-dir", cache, directory.appending("nowhere")])
        #expect(missing.status == 3 && missing.standardError.contains("not a cache directory"))
    }

    @Test(
        "a CDN alias pair is stored once: one file, stats shows the bytes saved, verify removes both when it is damaged"
    )
    func aliasPairStoredOnce() async throws {
        let server = try await LoopbackServer()
        let image = SampleImages.png(width: 32, height: 32, seed: 9)
        server.route("/cdn-a/logo.png", .ok(image))
        server.route("/cdn-b/logo.png", .ok(image))
        let urls = [server.url("/cdn-a/logo.png"), server.url("/cdn-b/logo.png")]
        let run = try await sdfetch(["--cache-dir", cache], input: urls.joined(separator: "\n"))
        try await server.shutdown()
        #expect(run.status == 0, "\(run.standardError)")
        var paths: [String] = []
        for url in urls {
            paths.append(
                try await sdfetch(["path", "--cache-dir", cache, url]).standardOutput.trimmingCharacters(in: .newlines))
        }
        let inodes = try paths.map { try FileManager.default.attributesOfItem(atPath: $0)[.systemFileNumber] as? Int }
        #expect(paths[0] != paths[1] && inodes[0] != nil && inodes[0] == inodes[1])
        let object = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        #expect(object["entries"] as? Int == 2 && object["saved_bytes"] as? Int == image.count)
        #expect(object["image_bytes"] as? Int == image.count)
        let text = try await sdfetch(["stats", "--cache-dir", cache]).standardOutput
        #expect(text.contains("saved    \(image.count) ("), "\(text)")

        // One byte flipped in the shared file: both URLs lose their entry.
        let handle = try #require(FileHandle(forUpdatingAtPath: paths[0]))
        try handle.seek(toOffset: 40)
        try handle.write(contentsOf: Data([0xAA]))
        try handle.close()
        let verify = try await sdfetch(["verify", "--json", "--cache-dir", cache])
        #expect(verify.status == 1)
        let lines = verify.standardOutput.split(separator: "\n").compactMap { try? json(String($0)) }
        #expect(Set(lines.compactMap { $0["url"] as? String }) == Set(urls))
        #expect(lines.last?["checked"] as? Int == 2 && lines.last?["removed"] as? Int == 2)
        #expect(paths.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        let after = try json(try await sdfetch(["stats", "--json", "--cache-dir", cache]).standardOutput)
        #expect(after["entries"] as? Int == 0 && after["strays"] as? Int == 0)
    }
}
