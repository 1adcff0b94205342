import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The cache on its own: the format-4 record, LRU, cap, expiry, stray files, stats.
@Suite("Disk cache", .cleansUp)
struct DiskCacheTests {
    let directory = TemporaryDirectory("cache")
    let clock = ManualClock()
    let cache: DiskCache

    init() throws {
        // Every use is written at once (no batching interval), so LRU order is exact here.
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, useInterval: .zero)
    }

    private func key(_ name: String) throws -> URLKey { try URLKey(parsing: "http://example.test/\(name).png") }

    @discardableResult
    private func store(_ name: String, seed: Int = 0, etag: String? = nil, in cache: DiskCache? = nil) throws -> URLKey
    {
        let key = try key(name)
        try (cache ?? self.cache).store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: etag, lastModified: nil)
        return key
    }

    /// What the cache must count for `key`'s entry: its file plus its index line.
    private func entryBytes(_ key: URLKey, in cache: DiskCache? = nil) throws -> Int64 {
        let cache = cache ?? self.cache
        let entry = try #require(cache.entry(for: key))
        return entry.bytes + Int64(IndexRecord.put(key.digest, entry).line.count)
    }

    private func indexLines(_ key: URLKey) throws -> [Substring] {
        let bucket = directory.appending("cache/index/\(Buckets.name(Buckets.index(of: key.digest)))")
        // A compacted bucket starts with its table (header, fence, each line after its use
        // slot); the log follows.
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: bucket)))
        var lines: [Substring] = []
        let table = bytes.withUnsafeBytes { IndexTable(file: $0) }
        bytes.withUnsafeBytes { raw in
            table?.forEachLine(in: raw) { range, _ in
                lines.append(Substring(String(decoding: raw[range], as: UTF8.self)))
            }
        }
        return lines + String(decoding: bytes[(table?.end ?? 0)...], as: UTF8.self).split(separator: "\n")
    }

    @Test("a stored entry reads back with every field, from a new process too, and the file is the served bytes")
    func roundTrip() throws {
        let key = try key("a")
        let body = SampleImages.png(seed: 3)
        try cache.store(
            body, for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: "\"v1\"\\with backslash", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        let other = try DiskCache(directory: cache.directory, now: clock.read)
        for reader in [cache, other] {
            let entry = try #require(reader.entry(for: key))
            #expect(entry.url == key.string)
            #expect(entry.storedAt == clock.now && entry.accessedAt == clock.now)
            #expect(entry.etag == "\"v1\"\\with backslash")
            #expect(entry.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
            #expect(entry.format == .png && entry.width == 4 && entry.height == 4)
            #expect(entry.bytes == Int64(body.count))
            #expect(entry.sha256 == body.withUnsafeBytes(EntryFile.sha256(of:)))
            #expect(entry.stamp == Int64(clock.now.timeIntervalSince1970))
        }
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(body))
    }

    @Test("an entry is one file of image bytes plus one line in its bucket's index; FORMAT names version 4")
    func layout() throws {
        let keys = try (0..<20).map { try store("e\($0)", seed: $0) }
        let entries = directory.appending("cache/entries")
        let files = try FileManager.default.subpathsOfDirectory(atPath: entries).filter {
            Buckets.index(named: $0) == nil
        }
        let expected = keys.map { "\(Buckets.name(Buckets.index(of: $0.digest)))/\($0.digest.hex)" }
        #expect(files.sorted() == expected.sorted())
        let lines = try keys.flatMap { try indexLines($0) }
        #expect(Set(lines).count == 20 && lines.allSatisfy { $0.split(separator: " ")[1].hasPrefix("P\t") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp")).isEmpty)
        let format = try String(contentsOfFile: directory.appending("cache/FORMAT"), encoding: .utf8)
        #expect(format.hasPrefix("sdfetch cache format 4\n"))
        // Each entry file has one more name, by its bytes' SHA-256: the same inode.
        for key in keys {
            let entry = try #require(cache.entry(for: key))
            let content = directory.appending("cache/content/\(entry.sha256.prefix(2))/\(entry.sha256)")
            let named = try FileManager.default.attributesOfItem(atPath: content)[.systemFileNumber] as? Int
            let entryFile =
                try FileManager.default.attributesOfItem(atPath: cache.bodyPath(for: key))[.systemFileNumber] as? Int
            #expect(named != nil && named == entryFile)
        }
    }

    @Test("torn, foreign and corrupted index lines are skipped; a line appended after a torn one still reads")
    func damagedLines() throws {
        let a = try store("a", seed: 1)
        let bucket = directory.appending("cache/index/\(Buckets.name(Buckets.index(of: a.digest)))")
        let handle = try #require(FileHandle(forWritingAtPath: bucket))
        try handle.seekToEnd()
        // A writer killed halfway through its line, then garbage and a line whose check fails.
        let good = IndexRecord.put(a.digest, try #require(cache.entry(for: a))).line
        try handle.write(contentsOf: Data(good.prefix(60)))
        try handle.write(contentsOf: Data("\nnot a record at all\n".utf8))
        var flipped = good
        flipped[40] ^= 0x01
        try handle.write(contentsOf: Data(flipped))
        try handle.close()
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(reader.entry(for: a)?.sha256 == cache.entry(for: a)?.sha256)
        // The next writer's leading newline ends the torn line: its own line reads whole.
        let b = try key("b")
        try reader.store(
            SampleImages.png(seed: 2), for: b, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        let third = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(third.entry(for: a) != nil && third.entry(for: b) != nil)
        #expect(try third.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false).entries == 2)
        // Compaction dropped the damage: one line per entry is left.
        #expect(try indexLines(a).count == (Buckets.index(of: a.digest) == Buckets.index(of: b.digest) ? 2 : 1))
    }

    @Test("a store that fails before naming its file leaves the previous entry and no stray file")
    func failedWriteKeepsOldEntry() throws {
        let key = try store("a", seed: 1)
        // Another process (no folder held yet) finds a regular file where the bucket folder was.
        let bucket = directory.appending("cache/entries/\(Buckets.name(Buckets.index(of: key.digest)))")
        let saved = directory.appending("saved-bucket")
        try FileManager.default.moveItem(atPath: bucket, toPath: saved)
        _ = FileManager.default.createFile(atPath: bucket, contents: Data())
        let other = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(throws: FetchFailure.self) {
            try other.store(
                SampleImages.png(seed: 2), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        }
        try FileManager.default.removeItem(atPath: bucket)
        try FileManager.default.moveItem(atPath: saved, toPath: bucket)
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(reader.entry(for: key)?.sha256 == SampleImages.png(seed: 1).withUnsafeBytes(EntryFile.sha256(of:)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: bucket) == [key.digest.hex])
    }

    @Test("re-storing a key replaces its entry whole, with and without O_TMPFILE", arguments: [false, true])
    func replace(plainFiles: Bool) throws {
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, plainFiles: plainFiles)
        let key = try key("a")
        for (seed, etag) in [(1, "\"v1\""), (2, "\"v2\"")] {
            try cache.store(
                SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png), etag: etag,
                lastModified: nil)
            clock.advance(by: .seconds(1))
        }
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(reader.entry(for: key)?.etag == "\"v2\"")
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(SampleImages.png(seed: 2)))
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.appending("cache/entries"))
        #expect(!files.contains { $0.hasSuffix(".tmp") })
    }

    @Test("a hit moves an entry to the back of the LRU order, across processes")
    func hitUpdatesAccessTime() throws {
        let a = try store("a")
        clock.advance(by: .seconds(10))
        let b = try store("b")
        clock.advance(by: .seconds(10))
        cache.touch(a)
        #expect(cache.entry(for: a)?.accessedAt == clock.now)
        cache.flushUses()
        let other = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(try #require(other.entry(for: a)).accessedAt > other.entry(for: b)!.accessedAt)
        // Room for one entry: the least recently used (b, despite being stored later) goes.
        let report = try other.enforceLimit(maxBytes: try entryBytes(a), protecting: [])
        #expect(report.removedURLs == [b.string])
        #expect(other.entry(for: a) != nil && other.entry(for: b) == nil)
    }

    @Test("uses closer together than the interval add no index lines")
    func useInterval() throws {
        let batching = try DiskCache(
            directory: directory.appending("cache"), now: clock.read, useInterval: .seconds(600))
        let a = try store("a", in: batching)
        clock.advance(by: .seconds(60))
        batching.touch(a)  // the first use after the store: always written
        batching.flushUses()
        let before = try indexLines(a).count
        clock.advance(by: .seconds(60))
        batching.touch(a)
        batching.flushUses()
        #expect(try indexLines(a).count == before)
        clock.advance(by: .seconds(600))
        batching.touch(a)
        batching.flushUses()
        #expect(try indexLines(a).count == before + 1)
    }

    @Test("the first hit after a store counts for the LRU however soon it comes, in another process too")
    func firstUseAfterStoreCounts() throws {
        let batching = try DiskCache(
            directory: directory.appending("cache"), now: clock.read, useInterval: .seconds(600))
        let a = try store("a", in: batching)
        clock.advance(by: .seconds(1))
        let b = try store("b", in: batching)
        clock.advance(by: .seconds(1))
        // A second run a moment later: a is a hit, well inside the interval after its store.
        let rerun = try DiskCache(directory: batching.directory, now: clock.read, useInterval: .seconds(600))
        rerun.touch(a)
        rerun.flushUses()
        let cleaner = try DiskCache(directory: batching.directory, now: clock.read)
        #expect(try #require(cleaner.entry(for: a)).accessedAt == clock.now)
        // Room for one entry: b, stored later but never used, goes.
        let report = try cleaner.enforceLimit(maxBytes: try entryBytes(a, in: cleaner), protecting: [])
        #expect(report.removedURLs == [b.string])
    }

    @Test("reading an entry's file (a backup, a viewer of an -o link) does not count as a use")
    func readsDoNotTouch() throws {
        let a = try store("a")
        clock.advance(by: .seconds(1))
        let b = try store("b")
        clock.advance(by: .seconds(1))
        cache.touch(a)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: b)) == Data(SampleImages.png()))
        let report = try cache.enforceLimit(maxBytes: try entryBytes(a), protecting: [])
        #expect(report.removedURLs == [b.string])
    }

    @Test("the cap trims least recently used first and counts index bytes")
    func capTrimsOldestFirst() throws {
        var keys: [URLKey] = []
        for index in 0..<5 {
            keys.append(try store("e\(index)", seed: index))
            clock.advance(by: .seconds(1))
        }
        let sizes = try keys.map { try entryBytes($0) }
        let report = try cache.enforceLimit(maxBytes: sizes[2...].reduce(0, +), protecting: [])
        #expect(report.removedURLs == [keys[0].string, keys[1].string])
        #expect(report.removedEntries == 2 && report.removedBytes == sizes[0] + sizes[1])
        #expect(report.entries == 3 && report.bytes == sizes[2...].reduce(0, +))
        #expect(try DiskCache.stats(directory: cache.directory).bytes == report.bytes)
    }

    @Test("entries used by the current run are evicted last")
    func protectedEntriesGoLast() throws {
        let old = try store("old")
        clock.advance(by: .seconds(1))
        let newer = try store("newer")
        let report = try cache.enforceLimit(maxBytes: try entryBytes(old), protecting: [old.digest])
        #expect(report.removedURLs == [newer.string])
        #expect(cache.entry(for: old) != nil)
    }

    @Test("a process that stored nothing skips the size scan under a cap no smaller than the last trim's")
    func capRecordSkipsScan() throws {
        for index in 0..<3 { try store("e\(index)", seed: index) }
        let cap: Int64 = 1 << 20
        #expect(try !cache.enforceLimit(maxBytes: cap, protecting: []).wasSkipped)
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(try reader.enforceLimit(maxBytes: cap, protecting: []).wasSkipped)
        let trimmed = try reader.enforceLimit(maxBytes: 1, protecting: [])
        #expect(!trimmed.wasSkipped && trimmed.removedEntries == 3)
        let writer = try DiskCache(directory: cache.directory, now: clock.read)
        try store("new", in: writer)
        let another = try DiskCache(directory: cache.directory, now: clock.read)
        let report = try another.enforceLimit(maxBytes: 1, protecting: [])
        #expect(!report.wasSkipped && report.removedEntries == 1)
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
        // A max-age too large for the clock's range is no crash: nothing expires.
        #expect(try cache.clean(maxAge: .seconds(Int64.max), maxSize: nil, dryRun: false).entries == 1)
    }

    @Test("clean compacts the index to one line per live entry and keeps serving")
    func compaction() throws {
        let a = try store("a", seed: 1)
        for seed in 2..<6 {
            clock.advance(by: .seconds(1))
            try store("a", seed: seed)
            cache.touch(a)
        }
        cache.flushUses()
        #expect(try indexLines(a).count >= 9)
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        #expect(try indexLines(a).count == 1)
        let reader = try DiskCache(directory: cache.directory, now: clock.read)
        #expect(reader.entry(for: a)?.sha256 == SampleImages.png(seed: 5).withUnsafeBytes(EntryFile.sha256(of:)))
        #expect(reader.entry(for: a)?.accessedAt == clock.now)
    }

    @Test("stats reports entries, bytes (a shared file once), formats and dates; a missing directory reports zeros")
    func stats() throws {
        let missing = directory.appending("nowhere")
        #expect(try DiskCache.stats(directory: missing) == CacheStats())
        #expect(!FileManager.default.fileExists(atPath: missing))
        let a = try store("a")
        let first = clock.now
        clock.advance(by: .seconds(5))
        let b = try store("b")
        FailureBlacklist(cache: cache).insert(FetchFailure(.http(404), "server answered 404"), for: try key("gone"))
        let stats = try DiskCache.stats(directory: cache.directory)
        // Both hold the same image: one file, counted once, and its size saved.
        let image = Int64(SampleImages.png().count)
        let expected = try entryBytes(a) + entryBytes(b) - image
        #expect(stats.entries == 2 && stats.bytes == expected && stats.savedBytes == image && stats.imageBytes == image)
        #expect(stats.formats == [.png: 2] && stats.failed == 1 && stats.strays == 0)
        #expect(stats.oldest == first && stats.newest == clock.now)
        let file = directory.write("x", to: "a-file")
        #expect(throws: CacheError.self) { try DiskCache.stats(directory: file) }
    }

    @Test("missing parents of the cache directory are created; a file in its place is an error")
    func parents() throws {
        let nested = directory.appending("a/b/c/cache")
        _ = try DiskCache(directory: nested)
        #expect(FileManager.default.fileExists(atPath: nested + "/FORMAT"))
        let file = directory.write("x", to: "plain")
        #expect(throws: CacheError.self) { try DiskCache(directory: file) }
        #expect(throws: CacheError.self) { try DiskCache(directory: file + "/below") }
    }
}
