import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The buckets' counters (OnDiskFormat.md, "Counters and trimming"): the trim sizes the
/// cache from `usage/`, writers keep the counters up, and counters behind their index are
/// recounted from that bucket alone.
@Suite("Cache counters", .cleansUp)
struct CacheCountersTests {
    let directory = TemporaryDirectory("counters")
    let clock = ManualClock()

    private var path: String { directory.appending("cache") }

    private func open() throws -> DiskCache {
        try DiskCache(directory: path, now: clock.read, useInterval: .zero)
    }

    @discardableResult
    private func store(_ name: String, seed: Int, in cache: DiskCache) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/\(name).png")
        try cache.store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: nil, lastModified: nil)
        clock.advance(by: .seconds(1))
        return key
    }

    /// Keys whose entries fall in pairwise different buckets.
    private func keysInBuckets(_ count: Int, in cache: DiskCache) throws -> [URLKey] {
        var seen = Set<Int>()
        var keys: [URLKey] = []
        var index = 0
        while keys.count < count {
            let key = try URLKey(parsing: "http://example.test/\(index).png")
            index += 1
            guard seen.insert(Buckets.index(of: key.digest)).inserted else { continue }
            try cache.store(
                SampleImages.png(seed: keys.count), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
                etag: nil, lastModified: nil)
            clock.advance(by: .seconds(1))
            keys.append(key)
        }
        return keys
    }

    private func counters(_ key: URLKey) -> BucketUsage? {
        let file = path + "/usage/" + Buckets.name(Buckets.index(of: key.digest))
        guard let bytes = FileManager.default.contents(atPath: file) else { return nil }
        return [UInt8](bytes).withUnsafeBytes { BucketUsage(fileBytes: $0) }
    }

    @Test("counters read back as written, an inode past Int64.max (overlayfs sets high bits) included")
    func countersRoundTrip() {
        for inode in [UInt64(7), UInt64(Int64.max), UInt64(Int64.max) + 9, UInt64.max] {
            let usage = BucketUsage(inode: inode, length: 4096, entries: 2, bytes: 9000, oldest: 5)
            #expect(usage.fileBytes.withUnsafeBytes { BucketUsage(fileBytes: $0) } == usage, "inode \(inode)")
        }
    }

    @Test("forged counters are refused: bytes without entries, past 32 GiB an entry, past 8 PiB a bucket")
    func implausibleCounters() {
        func parses(_ usage: BucketUsage) -> Bool {
            usage.fileBytes.withUnsafeBytes { BucketUsage(fileBytes: $0) } != nil
        }
        #expect(!parses(BucketUsage(inode: 1, length: 0, entries: 0, bytes: 1 << 50)))
        #expect(!parses(BucketUsage(inode: 1, length: 100, entries: 1, bytes: (1 << 35) + 101)))
        #expect(parses(BucketUsage(inode: 1, length: 100, entries: 1, bytes: (1 << 35) + 100)))
        #expect(!parses(BucketUsage(inode: 1, length: 1 << 40, entries: 1 << 24, bytes: 1 << 59)))
        #expect(!BucketUsage(bytes: 1).isCurrent(for: nil) && BucketUsage().isCurrent(for: nil))
    }

    @Test("the trim sizes the cache from the counters: a bucket it need not touch is not read")
    func trimReadsCounters() throws {
        let writer = try open()
        let keys = try keysInBuckets(4, in: writer)
        let first = try writer.enforceLimit(maxBytes: 1 << 30, protecting: [])
        #expect(first.entries == 4)
        // An entry file removed behind the cache's back: a scan would see three entries, the
        // counters of its untouched bucket still say one.
        try FileManager.default.removeItem(atPath: writer.bodyPath(for: keys[0]))
        let next = try open()
        try store("new", seed: 9, in: next)
        let report = try next.enforceLimit(maxBytes: 1 << 30, protecting: [])
        #expect(!report.wasSkipped)
        #expect(report.entries == 5, "the counters, not a scan: \(report.entries)")
        // `clean` recounts every bucket it cleans.
        #expect(try open().clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false).entries == 4)
    }

    @Test("a writer adds its stores to its buckets' counters, which then match their index files")
    func writersReport() throws {
        let first = try open()
        let keys = try keysInBuckets(3, in: first)
        _ = try first.enforceLimit(maxBytes: 1 << 30, protecting: [])
        let before = try #require(counters(keys[1]))
        let writer = try open()
        // Same bucket as keys[1], a new entry.
        var index = 1000
        var other: URLKey
        repeat {
            other = try URLKey(parsing: "http://example.test/\(index).png")
            index += 1
        } while Buckets.index(of: other.digest) != Buckets.index(of: keys[1].digest)
        try writer.store(
            SampleImages.png(seed: 7), for: other, image: VerifiedImage(format: .png, width: 4, height: 4), etag: nil,
            lastModified: nil)
        let size =
            try #require(writer.entry(for: other)).bytes + Int64(IndexRecord.lineLength(of: writer.entry(for: other)!))
        writer.reportUsage()
        let after = try #require(counters(keys[1]))
        #expect(after.entries == before.entries + 1 && after.bytes == before.bytes + size)
        #expect(after.isCurrent(for: writer.index.fileState(Buckets.index(of: other.digest))))
        let stats = try DiskCache.stats(directory: path)
        #expect(try open().enforceLimit(maxBytes: 1 << 30, protecting: []).bytes == stats.bytes)
    }

    @Test("counters a killed writer left behind are recounted from their bucket")
    func behindIsRecounted() throws {
        let first = try open()
        _ = try keysInBuckets(3, in: first)
        _ = try first.enforceLimit(maxBytes: 1 << 30, protecting: [])
        // Stores and never reports: as a process killed before its end.
        let killed = try open()
        for index in 0..<5 { try store("k\(index)", seed: 20 + index, in: killed) }
        let report = try open().enforceLimit(maxBytes: 1 << 30, protecting: [])
        let stats = try DiskCache.stats(directory: path)
        #expect(report.entries == 8 && report.entries == stats.entries && report.bytes == stats.bytes)
    }

    @Test("a copy with new inodes recounts, and trims in LRU order across buckets")
    func copyRecountsAndTrims() throws {
        let writer = try open()
        let keys = try keysInBuckets(4, in: writer)
        _ = try writer.enforceLimit(maxBytes: 1 << 30, protecting: [])
        let copy = directory.appending("copy")
        let status = try Process.run(URL(fileURLWithPath: "/bin/cp"), arguments: ["-r", path, copy])
        status.waitUntilExit()
        let reader = try DiskCache(directory: copy, now: clock.read, useInterval: .zero)
        let sizes = try keys.map { key in
            let entry = try #require(reader.entry(for: key))
            return entry.bytes + Int64(IndexRecord.lineLength(of: entry))
        }
        let report = try reader.enforceLimit(maxBytes: sizes[2] + sizes[3], protecting: [])
        #expect(report.removedURLs == [keys[0].string, keys[1].string])
        #expect(report.entries == 2 && report.bytes == sizes[2] + sizes[3])
        #expect(try DiskCache.stats(directory: copy).entries == 2)
    }

    @Test("clean trusts tidy counters, yet expires what their span of stored times says is old")
    func cleanTrustsTidyCounters() throws {
        let writer = try open()
        let keys = try keysInBuckets(3, in: writer)
        writer.reportUsage()
        // Tidy: current counters, every file an entry's.
        let bucket = Buckets.name(Buckets.index(of: keys[0].digest))
        let day: Duration = .seconds(86400)
        #expect(try open().clean(maxAge: day, maxSize: nil, dryRun: false).entries == 3)
        #expect(try #require(counters(keys[0])).storedFrom > 0)
        // A temporary the counters do not count sends its bucket back to a full sweep.
        let temporary = path + "/entries/" + bucket + "/x" + FileIO.temporarySuffix
        #expect(FileManager.default.createFile(atPath: temporary, contents: Data([1])))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1e9)], ofItemAtPath: temporary)
        #expect(try open().clean(maxAge: day, maxSize: nil, dryRun: false).removedTemp == 1)
        // Two days on, the counters' span is past a one-day age: every entry goes.
        clock.advance(by: .seconds(2 * 86400))
        let expired = try open().clean(maxAge: day, maxSize: nil, dryRun: false)
        #expect(expired.removedEntries == 3 && expired.entries == 0)
    }

    @Test("lock files are created 0600, and an older 0644 one is narrowed")
    func lockFileMode() throws {
        let cache = try open()
        let key = try store("a", seed: 1, in: cache)
        let bucket = Buckets.name(Buckets.index(of: key.digest))
        let lock = path + "/locks/" + bucket
        #expect(FileManager.default.createFile(atPath: lock, contents: nil, attributes: [.posixPermissions: 0o644]))
        try store("a", seed: 2, in: cache)  // a replacement takes the bucket's lock
        #expect((try FileManager.default.attributesOfItem(atPath: lock)[.posixPermissions] as? Int) == 0o600)
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let maintenance = path + "/locks/maintenance"
        #expect((try FileManager.default.attributesOfItem(atPath: maintenance)[.posixPermissions] as? Int) == 0o600)
    }
}
