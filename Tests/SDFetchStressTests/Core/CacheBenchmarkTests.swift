import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Times the cache over directories filled by `Scripts/fill-cache.py`
/// (`Scripts/bench.d/RESULTS.md` targets: warm hits >= 100,000 URLs/s, `clean` over
/// 100,000 entries under 1 s). Measurements, not timed tests: they run only when their
/// environment variable names the directory, via `Scripts/cache-bench.sh`, and print their
/// numbers.
@Suite("Cache benchmark", .cleansUp)
struct CacheBenchmarkTests {
    static let environment = ProcessInfo.processInfo.environment

    @Test("warm hits over a filled cache", .enabled(if: environment["SDFETCH_BENCH_WARM"] != nil))
    func warmHits() async throws {
        let path = try #require(Self.environment["SDFETCH_BENCH_WARM"])
        let list = path + ".txt"
        let text = try String(contentsOfFile: list, encoding: .utf8)
        let urls = text.split(separator: "\n").map(String.init)
        let fetcher = Fetcher.scoped(options: FetchOptions(), cache: try DiskCache(directory: path))
        let clock = ContinuousClock()
        for round in 1...3 {
            var start = clock.now
            var hits = 0
            for url in urls {
                if case .answered = fetcher.probe(try URLKey(parsing: url), spelling: url) { hits += 1 }
            }
            let hitTime = clock.now - start
            start = clock.now
            let run = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(list)]))
            let runTime = clock.now - start
            func rate(_ time: Duration) -> Int { Int(Double(urls.count) / time.timeInterval) }
            print(
                """
                bench: round \(round): parse + probe: \(hits) hits in \(hitTime) (\(rate(hitTime)) URLs/s); \
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
        let week: Duration = .seconds(7 * 86400)
        func timed<T>(_ label: String, _ work: () throws -> T) rethrows -> T {
            let start = clock.now
            let result = try work()
            print("bench: \(label): \(clock.now - start)")
            return result
        }
        let before = try timed("stats") { try DiskCache.stats(directory: path) }
        print("bench: \(before.entries) entries, \(before.bytes) bytes")
        let cache = try DiskCache(directory: path)
        let dry = try timed("clean --max-age 7d --dry-run") {
            try cache.clean(maxAge: week, maxSize: nil, dryRun: true)
        }
        let expired = try timed("clean --max-age 7d") { try cache.clean(maxAge: week, maxSize: nil, dryRun: false) }
        print("bench:   removed \(expired.removedEntries) expired entries, \(expired.entries) remain")
        let cap = expired.bytes / 10 * 9
        let trimmed = try timed("clean --max-size (90% of the rest)") {
            try cache.clean(maxAge: week, maxSize: cap, dryRun: false)
        }
        print("bench:   removed \(trimmed.removedEntries) least recently used entries, \(trimmed.entries) remain")
        let again = try timed("clean with nothing to remove") {
            try cache.clean(maxAge: week, maxSize: cap, dryRun: false)
        }
        #expect(expired.removedEntries == dry.removedEntries)
        #expect(trimmed.bytes <= cap && again.removedEntries == 0)
    }
}
