import Foundation
import SDFetchCore
import Testing

/// Times `clean` and `stats` over a cache filled by `Scripts/fill-cache.py` (SPEC
/// "Performance": `clean` over 100,000 entries under 2 s). A measurement, not a timed
/// test: it runs only when `SDFETCH_BENCH_CACHE` names the directory, via
/// `Scripts/cache-bench.sh`, and prints its numbers.
@Suite("Cache benchmark", .enabled(if: ProcessInfo.processInfo.environment["SDFETCH_BENCH_CACHE"] != nil))
struct CacheBenchmarkTests {
    @Test("clean over a filled cache")
    func cleanFilledCache() throws {
        let path = try #require(ProcessInfo.processInfo.environment["SDFETCH_BENCH_CACHE"])
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
