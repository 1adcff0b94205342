import Foundation
import SDFetchTestSupport
import Synchronization
import Testing

@testable import SDFetchCore

/// Maintenance beside fetches and against a hostile directory, with real `sdfetch`
/// processes: a `304` whose entry a `clean` removes, `kill -9` at random points amid
/// `clean`, `verify` and `merge`, and the removal of a format-1 cache that a user swaps names in.
@Suite("cache maintenance races", .cleansUp, .timeLimit(.minutes(3)))
struct CacheMaintenanceRaceTests {
    let directory = TemporaryDirectory("cache-races")

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.sdfetch(arguments, input: input)
    }

    @Test("-o --refresh: an entry a clean removes while its 304 is on the way is still delivered")
    func revalidatedEntryRemovedMeanwhile() async throws {
        let server = try await LoopbackServer()
        let body = SampleImages.png(seed: 21)
        server.route(
            "/a.png", .ok(body, headers: [("ETag", "\"v1\"")]),
            ScriptedResponse(status: 304, headers: [("ETag", "\"v1\"")], delay: .seconds(2)))
        let cache = directory.appending("cache")
        let output = directory.appending("out")
        #expect(try await sdfetch(["--cache-dir", cache], input: server.url("/a.png") + "\n").status == 0)

        async let refreshed = sdfetch(
            ["--cache-dir", cache, "--refresh", "-o", output], input: server.url("/a.png") + "\n")
        #expect(await server.waitForRequests(2))
        let clean = try await sdfetch(["clean", "--max-age", "0s", "--cache-dir", cache])
        #expect(clean.status == 0 && clean.standardOutput.contains("removed 1 entry"), "\(clean.standardOutput)")
        let run = try await refreshed

        #expect(run.status == 0, "\(run.standardOutput) \(run.standardError)")
        #expect(run.standardOutput.contains("revalidated"))
        let delivered = try FileManager.default.contentsOfDirectory(atPath: output)
        #expect(delivered.count == 1 && FileManager.default.contents(atPath: output + "/" + delivered[0]) == Data(body))
    }

    /// A delivery that, the first time it meets each URL, removes the entry's file before it
    /// opens it, as another process's `clean` or `verify` may between a lookup and the copy.
    final class RacingDelivery: ResultDelivery {
        let cache: DiskCache
        let raced = Mutex<Set<String>>([])

        init(cache: DiskCache) { self.cache = cache }

        func deliver(_ result: inout FetchResult) async {
            guard let key = result.key, result.status.isSuccess else { return }
            if raced.withLock({ $0.insert(key.string).inserted }) { unlink(cache.bodyPath(for: key)) }
            do throws(CachedImage.Unreadable) {
                _ = try cache.openImage(for: key)
            } catch {
                result.status = .failed
                result.failure = FetchFailure(.io, error.detail)
                result.entryWasRemoved = error.isGone
            }
        }
    }

    @Test("an entry removed between its lookup or store and its delivery costs a fetch, never the URL")
    func entryRemovedBeforeDelivery() async throws {
        let server = try await LoopbackServer()
        for index in 0..<3 { server.route("/\(index).png", .ok(SampleImages.png(seed: 30 + index))) }
        let list = directory.write((0..<3).map { server.url("/\($0).png") }.joined(separator: "\n"), to: "list")
        let cache = try DiskCache(directory: directory.appending("cache"))
        // Downloaded and stored, removed before the copy; then cached, removed after the lookup.
        let stored = await CollectedRun.collect(
            FetchRun(
                fetcher: try Fetcher.forTesting(in: directory), sources: [.file(list)],
                delivery: RacingDelivery(cache: cache)))
        let warm = await CollectedRun.collect(
            FetchRun(
                fetcher: try Fetcher.forTesting(in: directory), sources: [.file(list)],
                delivery: RacingDelivery(cache: cache)))

        #expect(
            stored.results.map(\.status) == [.downloaded, .downloaded, .downloaded], "\(stored.results.map(\.failure))")
        #expect(
            warm.results.map(\.status) == [.downloaded, .downloaded, .downloaded], "\(warm.results.map(\.failure))")
        #expect(server.totalRequests == 9)
    }

    // MARK: - Format 1

    /// A format-1 layout: an entry, a failure record, a lock, a temporary.
    private func formatOne(_ path: String) throws {
        for folder in ["entries/ab", "failed/cd", "locks", "tmp"] {
            try FileManager.default.createDirectory(atPath: path + "/" + folder, withIntermediateDirectories: true)
        }
        for file in [
            "entries/ab/0123456789abcdef0123456789abcdef", "failed/cd/0123456789abcdef0123456789abcdef",
            "locks/ab", "tmp/1-2.tmp", "within-cap",
        ] {
            #expect(FileManager.default.createFile(atPath: path + "/" + file, contents: Data("x".utf8)))
        }
    }

    @Test("clean removes a format-1 cache only on evidence everywhere: a user's files under tmp/ or failed/ stay")
    func formatOneEvidenceEverywhere() async throws {
        let old = directory.appending("old")
        try formatOne(old)
        #expect(try DiskCache.removeFormatOne(directory: old) == 5)
        var info = stat()
        #expect(lstat(old + "/entries", &info) != 0)

        for (folder, file) in [("tmp", "notes.txt"), ("failed", "draft.txt"), ("failed/cd", "thesis.tex")] {
            let mixed = directory.appending("mixed-\(folder.replacingOccurrences(of: "/", with: "-"))")
            try formatOne(mixed)
            let users = mixed + "/" + folder + "/" + file
            #expect(FileManager.default.createFile(atPath: users, contents: Data("mine".utf8)))
            let run = try await sdfetch(["clean", "--cache-dir", mixed])
            #expect(run.status != 0 && run.standardError.contains("not an sdfetch cache"), "\(run.standardError)")
            #expect(FileManager.default.contents(atPath: users) == Data("mine".utf8))
            #expect(FileManager.default.fileExists(atPath: mixed + "/entries/ab/0123456789abcdef0123456789abcdef"))
        }
    }

    @Test("a format-1 cache others can write is not removed; names swapped with links never lead the removal outside")
    func formatOneRemovalStaysInside() async throws {
        let shared = directory.appending("shared")
        try formatOne(shared)
        chmod(shared + "/tmp", 0o777)
        #expect(throws: CacheError.self) { try DiskCache.removeFormatOne(directory: shared) }
        #expect(FileManager.default.fileExists(atPath: shared + "/tmp/1-2.tmp"))

        // A folder outside the cache, and a user who swaps a real folder in the cache with a
        // link to it while `clean` runs.
        let victim = directory.appending("victim")
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        let precious = victim + "/0123456789abcdef0123456789abcdef"
        #expect(FileManager.default.createFile(atPath: precious, contents: Data("precious".utf8)))
        for attempt in 0..<6 {
            let cache = directory.appending("swap-\(attempt)")
            try formatOne(cache)
            try FileManager.default.createDirectory(atPath: cache + "/tmp/d0", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(
                atPath: cache + "/tmp/d0/0123456789abcdef0123456789abcdef", contents: nil)
            #expect(symlink(victim, cache + "/tmp/s0") == 0)
            let stop = StopFlag()
            let (real, link, spare) = (cache + "/tmp/d0", cache + "/tmp/s0", cache + "/tmp/x0")
            let swapper = Thread {
                // d0 and s0 trade places, again and again: a folder, then a link, under one name.
                while !stop.value.load(ordering: .relaxed) {
                    rename(real, spare)
                    rename(link, real)
                    rename(spare, link)
                }
            }
            swapper.start()
            for _ in 0..<20 { _ = try? DiskCache.removeFormatOne(directory: cache) }
            stop.value.store(true, ordering: .relaxed)
            #expect(FileManager.default.contents(atPath: precious) == Data("precious".utf8), "attempt \(attempt)")
        }
    }

    // MARK: - kill -9 storm

    /// Every name under `path` that is not a folder.
    private func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { name in
            var info = stat()
            return lstat(path + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR
        }
    }

    @Test("kill -9 storm: fetches killed at random beside clean, verify and merge over shared bytes end clean")
    func killStorm() async throws {
        let server = try await LoopbackServer()
        // 60 URLs over 12 distinct images: every image behind 5 URLs.
        let paths = (0..<60).map { "/s/\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, .ok(SampleImages.png(width: 64, height: 64, seed: index % 12)))
        }
        let cache = directory.appending("cache")
        let other = directory.appending("other")
        let output = directory.appending("out")
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "list.txt")
        #expect(try await sdfetch(["--cache-dir", other, "-q", list]).status == 0)
        let binary = BuiltProduct.path("sdfetch")
        let commands: [[String]] = [
            // -o --link: outputs are more hard links to the entries' (and content files') inodes.
            [
                "--no-config", "--progress", "never", "--cache-dir", cache, "--refresh", "-q", "-o", output, "--link",
                list,
            ],
            ["clean", "--no-config", "--max-age", "1s", "--cache-dir", cache],
            ["verify", "--no-config", "--cache-dir", cache],
            ["merge", "--no-config", "-q", "--cache-dir", cache, other],
        ]
        var random = SeededRandom("kill -9 storm")
        let deadline = ContinuousClock.now + .seconds(10)
        var round = 0
        while ContinuousClock.now < deadline {
            round += 1
            var running: [Process] = []
            for index in 0..<4 {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: binary)
                process.arguments = commands[(round + index) % commands.count]
                process.environment = ChildEnvironment.with(["HOME": directory.path])
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                running.append(process)
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 5...120, using: &random)))
            // Fetches die by SIGKILL mid-run; maintenance is left to finish or die with them.
            for process in running where process.arguments?.contains("--refresh") == true || Bool.random(using: &random)
            {
                kill(process.processIdentifier, SIGKILL)
            }
            for process in running { await process.exited() }
        }
        #expect(round >= 2)

        let verify = try await sdfetch(["verify", "--cache-dir", cache])
        #expect(verify.status == 0, "after \(round) rounds: \(verify.standardOutput) \(verify.standardError)")
        // A killed writer's temporary is removed once it has stood still for the writers' grace.
        let shortWaits = ["HOME": directory.path, "SDFETCH_TEST_SHORT_WAITS": "1"]
        try await Task.sleep(for: .milliseconds(400))
        let clean = try await ProcessRun.sdfetch(
            ["clean", "--max-age", "0s", "--cache-dir", cache], environment: shortWaits)
        #expect(clean.status == 0, "\(clean.standardError)")
        for folder in ["content", "tmp", "entries", "index"] {
            let left = files(under: cache + "/" + folder).filter { folder != "index" || $0.hasSuffix(".tmp") }
            #expect(left.isEmpty, "\(folder): \(left.prefix(5))")
        }
    }
}

/// Tells a thread of the test to stop.
private final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
