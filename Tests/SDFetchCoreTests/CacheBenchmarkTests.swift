import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Times the cache over directories filled by `Scripts/fill-cache.py` (SPEC "Performance":
/// warm hits >= 50,000 URLs/s, `clean` over 100,000 entries under 2 s). Measurements, not
/// timed tests: they run only when their environment variable names the directory, via
/// `Scripts/cache-bench.sh`, and print their numbers.
@Suite("Cache benchmark")
struct CacheBenchmarkTests {
    static let environment = ProcessInfo.processInfo.environment

    @Test("warm hits over a filled cache", .enabled(if: environment["SDFETCH_BENCH_WARM"] != nil))
    func warmHits() async throws {
        let path = try #require(Self.environment["SDFETCH_BENCH_WARM"])
        let list = path + ".txt"
        let text = try String(contentsOfFile: list, encoding: .utf8)
        let urls = text.split(separator: "\n").map(String.init)
        let fetcher = Fetcher(options: FetchOptions(), cache: try DiskCache(directory: path))
        defer { fetcher.shutdown() }
        let clock = ContinuousClock()
        for round in 1...3 {
            var start = clock.now
            var hits = 0
            for url in urls where fetcher.cachedHit(try URLKey(parsing: url), spelling: url) != nil { hits += 1 }
            let hitTime = clock.now - start
            start = clock.now
            let run = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
            let runTime = clock.now - start
            func rate(_ time: Duration) -> Int { Int(Double(urls.count) / time.timeInterval) }
            print("""
                bench: round \(round): parse + cachedHit: \(hits) hits in \(hitTime) (\(rate(hitTime)) URLs/s); \
                FetchRun to a collecting consumer: \(run.summary.count(.cached)) cached in \(runTime) \
                (\(rate(runTime)) URLs/s)
                """)
            #expect(hits == urls.count && run.summary.count(.cached) == urls.count)
        }
    }

    @Test("clean over a filled cache", .enabled(if: environment["SDFETCH_BENCH_CACHE"] != nil))
    func cleanFilledCache() throws {
        let path = try #require(Self.environment["SDFETCH_BENCH_CACHE"])
        let clock = ContinuousClock()
        var start = clock.now
        let before = try DiskCache.stats(directory: path, now: Date())
        let statsTime = clock.now - start
        let cache = try DiskCache(directory: path)
        start = clock.now
        let dry = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: before.bytes / 2, dryRun: true)
        let dryTime = clock.now - start
        start = clock.now
        let report = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: before.bytes / 2, dryRun: false)
        let cleanTime = clock.now - start
        start = clock.now
        let again = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: before.bytes / 2, dryRun: false)
        let againTime = clock.now - start
        print("""
            bench: stats over \(before.entries) entries: \(statsTime)
            bench: clean --dry-run: \(dryTime) (would remove \(dry.removedEntries))
            bench: clean over \(before.entries) entries: \(cleanTime) (removed \(report.removedEntries), \
            \(report.removedBytes) bytes; \(report.entries) remain)
            bench: second clean (nothing to do) over \(again.entries) entries: \(againTime)
            """)
        #expect(report.removedEntries == dry.removedEntries)
        #expect(again.removedEntries == 0)
    }
}
