import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

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

    /// What the cache must count for `key`'s entry: the body plus its metadata, that is
    /// the summary and origin attributes, or the whole record in a sidecar (plus the
    /// summary when only the origin was too long for an attribute).
    private func entryBytes(_ key: URLKey, in cache: DiskCache? = nil) throws -> Int64 {
        let cache = cache ?? self.cache
        let body = cache.bodyPath(for: key)
        let entry = try #require(cache.entry(for: key))
        let hasSummary = hasAttribute(EntryFile.summaryAttribute, body)
        let summaryBytes = hasSummary ? Int64(EntrySummary.encodedSize) : 0
        if FileManager.default.fileExists(atPath: body + ".meta") {
            return try fileSize(body) + fileSize(body + ".meta") + summaryBytes
        }
        return try fileSize(body) + summaryBytes + Int64(entry.originRecord.count)
    }

    private func hasAttribute(_ name: String, _ path: String) -> Bool {
        if case .found = EntryFile.attribute(name, atPath: path, { _ in () }) { return true }
        return false
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

    @Test("an entry is one file: its metadata lives in extended attributes, no other file is left")
    func oneFilePerEntry() throws {
        let keys = try (0..<20).map { try store("e\($0)", seed: $0) }
        let entries = directory.appending("cache/entries")
        let files = try FileManager.default.subpathsOfDirectory(atPath: entries).filter { !CacheScan.isShard($0) }
        #expect(files.sorted() == keys.map { "\(DiskCache.shard(of: $0))/\($0.digest.hex)" }.sorted())
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp")).isEmpty)
        #expect(!cache.usesSidecars)
        let body = cache.bodyPath(for: keys[0])
        #expect(hasAttribute(EntryFile.summaryAttribute, body) && hasAttribute(EntryFile.originAttribute, body))
        directory.remove()
    }

    @Test("on ext4, entries/ carries the top-directory flag that spreads shard folders over block groups")
    func topDirectoryFlag() throws {
        // The flag exists on ext2/3/4 only (magic 0xef53); elsewhere there is nothing to check.
        guard try output(of: "/usr/bin/stat", ["-f", "-c", "%t", cache.directory]) == "ef53\n" else { return }
        let lines = try output(of: "/usr/bin/lsattr", ["-d", cache.directory + "/entries", cache.directory + "/tmp"])
            .split(separator: "\n")
        // Each line: the flags, a space, the path.
        #expect(lines.first { $0.hasSuffix("/entries") }?.split(separator: " ").first?.contains("T") == true)
        #expect(lines.first { $0.hasSuffix("/tmp") }?.split(separator: " ").first?.contains("T") == false)
        directory.remove()
    }

    private func output(of tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("damaged, foreign or missing metadata is a miss, never a crash", arguments: [false, true])
    func corruptMetadata(sidecars: Bool) throws {
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, plainFiles: sidecars)
        let key = try key("a")
        try cache.store(SampleImages.png(), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        let body = cache.bodyPath(for: key)
        let entry = try #require(cache.entry(for: key))
        #expect(FileManager.default.fileExists(atPath: body + ".meta") == sidecars)
        func expectMiss(_ what: String) {
            #expect(cache.entry(for: key) == nil, "\(what)")
            #expect(cache.hit(key) { _ in true } == nil, "\(what)")
        }
        let garbage = Array("garbage\n".utf8)
        if sidecars {
            let good = entry.metadata
            for damaged in [[0x0A], Array(good.prefix(good.count / 2)), garbage, [UInt8](repeating: 0xFF, count: 300)] {
                try Data(damaged).write(to: URL(fileURLWithPath: body + ".meta"))
                expectMiss("sidecar \(damaged.prefix(8))")
            }
            unlink(body + ".meta")
            expectMiss("no sidecar")
        } else {
            let fd = open(body, O_RDONLY)
            defer { close(fd) }
            let summary = entry.summary(originBytes: entry.originRecord.count).encoded
            var otherVersion = summary
            otherVersion[0] = 9
            var unknownFormat = summary
            unknownFormat[1] = UInt8(ascii: "z")
            for damaged in [
                Array(summary.dropLast()), otherVersion, unknownFormat, [UInt8](repeating: 0xFF, count: 300),
            ] {
                #expect(EntryFile.setAttribute(EntryFile.summaryAttribute, damaged, of: fd) == nil)
                expectMiss("summary \(damaged.prefix(8))")
            }
            #expect(EntryFile.setAttribute(EntryFile.summaryAttribute, summary, of: fd) == nil)
            #expect(cache.entry(for: key) == entry)
            let origin = entry.originRecord
            for damaged in [Array(origin.prefix(origin.count / 2)), garbage] {
                #expect(EntryFile.setAttribute(EntryFile.originAttribute, damaged, of: fd) == nil)
                #expect(cache.entry(for: key) == nil)
            }
            removeMetadata(body)
            expectMiss("no attributes")
        }
        directory.remove()
    }

    @Test("a store that fails before naming its file leaves the previous entry and no stray file")
    func failedWriteKeepsOldEntry() throws {
        let key = try store("a", seed: 1)
        // Move the shard away and put a regular file in its place: creating the file fails.
        let shard = directory.appending("cache/entries/\(DiskCache.shard(of: key))")
        let saved = directory.appending("saved-shard")
        try FileManager.default.moveItem(atPath: shard, toPath: saved)
        _ = FileManager.default.createFile(atPath: shard, contents: Data())
        #expect(throws: FetchFailure.self) {
            try cache.store(
                SampleImages.png(seed: 2), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        }
        #expect(try fileSize(shard) == 0)
        try FileManager.default.removeItem(atPath: shard)
        try FileManager.default.moveItem(atPath: saved, toPath: shard)
        #expect(cache.entry(for: key) != nil)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(SampleImages.png(seed: 1)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: shard) == [key.digest.hex])
        directory.remove()
    }

    @Test(
        "re-storing a key replaces its entry whole; an origin too big for an attribute goes to a sidecar",
        arguments: [false, true])
    func replaceAndLargeRecord(plainFiles: Bool) throws {
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, plainFiles: plainFiles)
        let key = try key("a")
        for (seed, etag) in [(1, "\"v1\""), (2, "\"v2\"")] {
            try cache.store(
                SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png), etag: etag,
                lastModified: nil)
        }
        #expect(cache.entry(for: key)?.etag == "\"v2\"")
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(SampleImages.png(seed: 2)))
        // A URL near the 8 KiB limit makes an origin larger than ext4 allows in one attribute.
        let long = try URLKey(parsing: "http://example.test/" + String(repeating: "x", count: 7000) + ".png")
        try cache.store(SampleImages.png(), for: long, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        #expect(cache.entry(for: long)?.url == long.string)
        let longBody = cache.bodyPath(for: long)
        let isExt4 = try output(of: "/usr/bin/stat", ["-f", "-c", "%t", cache.directory]) == "ef53\n"
        if isExt4 && !plainFiles {
            // The origin moved to a sidecar, the summary kept its attribute.
            #expect(FileManager.default.fileExists(atPath: longBody + ".meta"))
            #expect(hasAttribute(EntryFile.summaryAttribute, longBody))
            #expect(!hasAttribute(EntryFile.originAttribute, longBody))
        }
        #expect(cache.hit(long) { _ in true }?.bytes == Int64(SampleImages.png().count))
        let report = try cache.enforceLimit(maxBytes: 1 << 30, protecting: [])
        #expect(report.entries == 2)
        #expect(report.bytes == (try entryBytes(key, in: cache)) + (try entryBytes(long, in: cache)))
        // Named temporaries (plain files) were renamed away; unnamed ones never had a name.
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.appending("cache/entries"))
        #expect(!files.contains { $0.hasSuffix(".tmp") })
        #expect(files.filter { !CacheScan.isShard($0) && !$0.hasSuffix(".meta") }.count == 2)
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
        let oneEntry = try entryBytes(a)
        let report = try cache.enforceLimit(maxBytes: oneEntry, protecting: [])
        #expect(report.removedURLs == [b.string])
        #expect(cache.entry(for: a) != nil && cache.entry(for: b) == nil)
        directory.remove()
    }

    @Test("reading an entry's file (a backup, a viewer of an -o link) does not count as a use")
    func readsDoNotTouch() throws {
        // Two days back: under `relatime` the kernel moves an access time over a day old
        // on the next read, which would make b look used if the LRU time were the atime.
        let twoDaysAgo = ManualClock(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 2 * 86400).rounded()))
        let cache = try DiskCache(directory: directory.appending("past"), now: twoDaysAgo.read)
        let a = try key("a")
        let b = try key("b")
        for key in [a, b] {
            try cache.store(
                SampleImages.png(), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
            twoDaysAgo.advance(by: .seconds(1))
        }
        cache.touch(a)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: b)) == Data(SampleImages.png()))
        let report = try cache.enforceLimit(maxBytes: try entryBytes(a, in: cache), protecting: [])
        #expect(report.removedURLs == [b.string])
        directory.remove()
    }

    @Test("the cap trims least recently used first and counts metadata bytes")
    func capTrimsOldestFirst() throws {
        var keys: [URLKey] = []
        for index in 0..<5 {
            keys.append(try store("e\(index)", seed: index))
            clock.advance(by: .seconds(1))
        }
        let perEntry = try entryBytes(keys[0])
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
        let perEntry = try entryBytes(old)
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
        var unlisted = dry
        unlisted.removedURLs = []
        #expect(try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: true, listing: false) == unlisted)
        report = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
        #expect(report == dry)
        #expect(cache.entry(for: a) == nil && cache.entry(for: b) != nil)
        let again = try cache.clean(maxAge: .seconds(7 * 86400), maxSize: nil, dryRun: false)
        #expect(again.removedEntries == 0 && again.entries == 1)
        directory.remove()
    }

    @Test("clean removes stray temporary files and orphaned halves but not a live writer's file")
    func strayFiles() throws {
        let orphanKey = try store("orphan")
        let shardDirectory = "cache/entries/\(DiskCache.shard(of: orphanKey))"
        let stale = [
            directory.write("x", to: "cache/tmp/1-1.tmp"), directory.write("x", to: "\(shardDirectory)/1-3.tmp"),
            // A sidecar whose body never got its name.
            directory.write("x", to: "\(shardDirectory)/\(String(repeating: "0", count: 32)).meta"),
        ]
        let live = [
            directory.write("y", to: "cache/tmp/1-2.tmp"), directory.write("y", to: "\(shardDirectory)/1-4.tmp"),
            directory.write("y", to: "\(shardDirectory)/\(String(repeating: "1", count: 32)).meta"),
        ]
        let twoHoursAgo = Int(clock.now.timeIntervalSince1970) - 7200
        for (paths, seconds) in [(stale, twoHoursAgo), (live, twoHoursAgo + 7140)] {
            var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
            for path in paths { utimensat(AT_FDCWD, path, &times, 0) }
        }
        // A body without any metadata (left by an older version crashing between renames).
        let orphan = cache.bodyPath(for: orphanKey)
        removeMetadata(orphan)
        let report = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        #expect(report.removedTemp == 4 && report.removedEntries == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/tmp")) == ["1-2.tmp"])
        #expect(stale.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        #expect(live.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        #expect(!FileManager.default.fileExists(atPath: orphan))
        directory.remove()
    }

    /// Removes both metadata attributes of the entry file at `path`.
    private func removeMetadata(_ path: String) {
        let fd = open(path, O_RDONLY)
        EntryFile.removeAttribute(EntryFile.summaryAttribute, of: fd)
        EntryFile.removeAttribute(EntryFile.originAttribute, of: fd)
        close(fd)
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
        let perEntry = try entryBytes(a)
        #expect(stats.entries == 2 && stats.bytes == perEntry * 2)
        #expect(stats.formats == [.png: 2] && stats.failed == 1)
        #expect(stats.oldest == first && stats.newest == clock.now)
        directory.remove()
    }
}
