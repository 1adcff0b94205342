import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The cache on its own: metadata, corruption, LRU, cap, expiry, stray files, stats.
@Suite("Disk cache")
struct DiskCacheTests {
    let directory = TemporaryDirectory("cache")
    let clock = ManualClock()
    let cache: DiskCache

    init() throws {
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
    }

    private func key(_ name: String) throws -> URLKey { try URLKey(parsing: "http://example.test/\(name).png") }

    @discardableResult
    private func store(_ name: String, seed: Int = 0, etag: String? = nil) throws -> URLKey {
        let key = try key(name)
        try cache.store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: etag, lastModified: nil)
        return key
    }

    private func fileSize(_ path: String) throws -> Int64 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64)
    }

    @Test("a stored entry reads back with every metadata field and the served bytes")
    func roundTrip() throws {
        let key = try key("a")
        try cache.store(
            SampleImages.png(seed: 3), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        let entry = try #require(cache.entry(for: key))
        #expect(entry.url == key.string)
        #expect(entry.storedAt == clock.now)
        #expect(entry.accessedAt == clock.now)
        #expect(entry.etag == "\"v1\"")
        #expect(entry.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(entry.format == .png && entry.width == 4 && entry.height == 4)
        #expect(entry.bytes == Int64(SampleImages.png(seed: 3).count))
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(SampleImages.png(seed: 3)))
        directory.remove()
    }

    @Test("a corrupt, truncated or foreign meta file is a miss, never a crash")
    func corruptMetadata() throws {
        let key = try store("a")
        let meta = cache.bodyPath(for: key) + ".meta"
        let good = try #require(FileManager.default.contents(atPath: meta))
        for damaged in [Data(), good.prefix(good.count / 2), Data("garbage\n".utf8), Data(repeating: 0xFF, count: 300)]
        {
            try damaged.write(to: URL(fileURLWithPath: meta))
            #expect(cache.entry(for: key) == nil)
        }
        directory.remove()
    }

    @Test("a failed write leaves the previous entry intact and nothing half-written")
    func failedWriteKeepsOldEntry() throws {
        let key = try store("a", seed: 1)
        // Replace tmp/ by a regular file: creating the temporary file now fails.
        let temporary = directory.appending("cache/tmp")
        try FileManager.default.removeItem(atPath: temporary)
        _ = FileManager.default.createFile(atPath: temporary, contents: Data())
        #expect(throws: FetchFailure.self) {
            try cache.store(
                SampleImages.png(seed: 2), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        }
        #expect(cache.entry(for: key) != nil)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(SampleImages.png(seed: 1)))
        directory.remove()
    }

    @Test("a hit moves an entry to the back of the LRU order")
    func hitUpdatesAccessTime() throws {
        let a = try store("a")
        clock.advance(by: .seconds(10))
        let b = try store("b")
        clock.advance(by: .seconds(10))
        cache.touch(a)
        #expect(cache.entry(for: a)?.accessedAt == clock.now)
        #expect(try #require(cache.entry(for: a)).accessedAt > cache.entry(for: b)!.accessedAt)
        // Room for one entry: the least recently used (b, despite being stored later) goes.
        let oneEntry = try fileSize(cache.bodyPath(for: a)) + fileSize(cache.bodyPath(for: a) + ".meta")
        let report = try cache.enforceLimit(maxBytes: oneEntry, protecting: [])
        #expect(report.removedURLs == [b.string])
        #expect(cache.entry(for: a) != nil && cache.entry(for: b) == nil)
        directory.remove()
    }

    @Test("the cap trims least recently used first and counts metadata bytes")
    func capTrimsOldestFirst() throws {
        var keys: [URLKey] = []
        for index in 0..<5 {
            keys.append(try store("e\(index)", seed: index))
            clock.advance(by: .seconds(1))
        }
        let perEntry = try fileSize(cache.bodyPath(for: keys[0])) + fileSize(cache.bodyPath(for: keys[0]) + ".meta")
        let report = try cache.enforceLimit(maxBytes: perEntry * 3, protecting: [])
        #expect(report.removedURLs == [keys[0].string, keys[1].string])
        #expect(report.removedEntries == 2 && report.removedBytes == perEntry * 2)
        #expect(report.entries == 3 && report.bytes == perEntry * 3)
        #expect(try DiskCache.stats(directory: cache.directory, now: clock.now).bytes == perEntry * 3)
        directory.remove()
    }

    @Test("entries used by the current run are evicted last")
    func protectedEntriesGoLast() throws {
        let old = try store("old")
        clock.advance(by: .seconds(1))
        let newer = try store("newer")
        let perEntry = try fileSize(cache.bodyPath(for: old)) + fileSize(cache.bodyPath(for: old) + ".meta")
        let report = try cache.enforceLimit(maxBytes: perEntry, protecting: [old.digest])
        #expect(report.removedURLs == [newer.string])
        #expect(cache.entry(for: old) != nil)
        directory.remove()
    }

    @Test("a process that stored nothing skips the size scan under a cap no smaller than the last trim's")
    func capRecordSkipsScan() throws {
        for index in 0..<3 { try store("e\(index)", seed: index) }
        let cap: Int64 = 1 << 20
        #expect(try !cache.enforceLimit(maxBytes: cap, protecting: []).wasSkipped)
        // A second process on the same directory, which has stored nothing.
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(try reader.enforceLimit(maxBytes: cap, protecting: []).wasSkipped)
        // A smaller cap is not known to hold: it scans and trims.
        let trimmed = try reader.enforceLimit(maxBytes: 1, protecting: [])
        #expect(!trimmed.wasSkipped && trimmed.removedEntries == 3)
        // Any process storing an entry voids the record for everyone.
        let writer = try DiskCache(directory: cache.directory, now: clock.read)
        try writer.store(
            SampleImages.png(), for: try key("new"), image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        let another = try DiskCache(directory: cache.directory, now: clock.read)
        let report = try another.enforceLimit(maxBytes: 1, protecting: [])
        #expect(!report.wasSkipped && report.removedEntries == 1)
        directory.remove()
    }

    @Test("clean removes entries once they are older than max-age, by the injected clock")
    func expiry() throws {
        let a = try store("a")
        clock.advance(by: .seconds(6 * 86400))
        let b = try store("b")
        var report = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
        #expect(report.removedEntries == 0 && report.entries == 2)
        clock.advance(by: .seconds(86400))
        let dry = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: true)
        #expect(dry.removedURLs == [a.string] && cache.entry(for: a) != nil)
        report = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
        #expect(report == dry)
        #expect(cache.entry(for: a) == nil && cache.entry(for: b) != nil)
        let again = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
        #expect(again.removedEntries == 0 && again.entries == 1)
        directory.remove()
    }

    @Test("clean removes stray temporary files and orphaned bodies but not a live writer's file")
    func strayFiles() throws {
        let tmp = directory.appending("cache/tmp")
        let stale = directory.write("x", to: "cache/tmp/1-1.tmp")
        let live = directory.write("y", to: "cache/tmp/1-2.tmp")
        var times = [timespec(tv_sec: Int(clock.now.timeIntervalSince1970) - 7200, tv_nsec: 0)]
        times.append(times[0])
        utimensat(AT_FDCWD, stale, &times, 0)
        var liveTimes = [timespec(tv_sec: Int(clock.now.timeIntervalSince1970) - 60, tv_nsec: 0)]
        liveTimes.append(liveTimes[0])
        utimensat(AT_FDCWD, live, &liveTimes, 0)
        // A crash between the body's and the metadata's rename leaves a body alone.
        let orphan = try store("orphan")
        unlink(cache.bodyPath(for: orphan) + ".meta")
        let report = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        #expect(report.removedTemp == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp) == ["1-2.tmp"])
        #expect(!FileManager.default.fileExists(atPath: cache.bodyPath(for: orphan)))
        directory.remove()
    }

    @Test("stats reports entries, bytes, formats and dates; a missing directory reports zeros")
    func stats() throws {
        let missing = directory.appending("nowhere")
        #expect(try DiskCache.stats(directory: missing, now: clock.now) == CacheStats())
        #expect(!FileManager.default.fileExists(atPath: missing))
        let a = try store("a")
        let first = clock.now
        clock.advance(by: .seconds(5))
        try store("b")
        FailureBlacklist(cache: cache).insert(FetchFailure(.http(404), "server answered 404"), for: try key("gone"))
        let stats = try DiskCache.stats(directory: cache.directory, now: clock.now)
        let perEntry = try fileSize(cache.bodyPath(for: a)) + fileSize(cache.bodyPath(for: a) + ".meta")
        #expect(stats.entries == 2 && stats.bytes == perEntry * 2)
        #expect(stats.formats == [.png: 2] && stats.failed == 1)
        #expect(stats.oldest == first && stats.newest == clock.now)
        directory.remove()
    }
}
