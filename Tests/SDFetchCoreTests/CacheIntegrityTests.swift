import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The cache trusts nothing on disk: changed entries are misses, planted links and FIFOs are
/// neither followed nor waited on, other format versions are named, `verify` and `merge`.
@Suite("Cache integrity", .timeLimit(.minutes(1)), .cleansUp)
struct CacheIntegrityTests {
    let directory = TemporaryDirectory("integrity")
    let clock = ManualClock()
    let cache: DiskCache

    init() throws {
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
    }

    private func store(_ name: String, seed: Int = 0, in cache: DiskCache? = nil) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/\(name).png")
        try (cache ?? self.cache).store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png), etag: "\"\(seed)\"",
            lastModified: nil)
        return key
    }

    /// A fresh process's view, so nothing is answered from this one's memory.
    private func reader() throws -> DiskCache { try DiskCache(directory: cache.directory, now: clock.read) }

    private func setMTime(_ path: String, seconds: Int, nanoseconds: Int = 0) {
        var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    @Test("an entry edited in place, truncated or replaced is never served")
    func changedEntriesAreMisses() throws {
        let edited = try store("edited", seed: 1)
        let truncated = try store("truncated", seed: 2)
        let replaced = try store("replaced", seed: 3)
        // Same size, other bytes, written now (as an editor writing through a hard link would).
        var bytes = SampleImages.png(seed: 1)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: cache.bodyPath(for: edited)))
        try FileHandle(forWritingAtPath: cache.bodyPath(for: truncated))!.truncate(atOffset: 10)
        // Another file of the same size renamed over it, even with the right mtime.
        let other = directory.appending("other")
        var otherBytes = SampleImages.png(seed: 3)
        otherBytes[20] ^= 0x55
        try Data(otherBytes).write(to: URL(fileURLWithPath: other))
        setMTime(other, seconds: Int(clock.now.timeIntervalSince1970) + 5)
        rename(other, cache.bodyPath(for: replaced))
        for reader in [cache, try reader()] {
            for key in [edited, truncated, replaced] {
                #expect(reader.entry(for: key) == nil)
                #expect(reader.servedEntry(key) == nil)
            }
        }
    }

    @Test("a file that only lost its mtime (cp -r) is hashed once, served, and stamped again")
    func unstampedButIntact() throws {
        let key = try store("a", seed: 4)
        let path = cache.bodyPath(for: key)
        setMTime(path, seconds: 1_000, nanoseconds: 123)
        let fresh = try reader()
        #expect(fresh.servedEntry(key)?.sha256 == SampleImages.png(seed: 4).withUnsafeBytes(EntryFile.sha256(of:)))
        var info = stat()
        stat(path, &info)
        #expect(Int64(info.st_mtim.tv_sec) == fresh.entry(for: key)?.stamp && info.st_mtim.tv_nsec == 0)
    }

    @Test("links, FIFOs and fake bucket folders in the cache are never followed or waited on; clean removes them")
    func plantedFiles() throws {
        let linked = try store("linked", seed: 5)
        let fifo = try store("fifo", seed: 6)
        let outsideFile = directory.write(String(decoding: SampleImages.png(seed: 5), as: UTF8.self), to: "secret")
        try Data(SampleImages.png(seed: 5)).write(to: URL(fileURLWithPath: outsideFile))
        // The entry becomes a symlink to a file of the right bytes outside the cache.
        unlink(cache.bodyPath(for: linked))
        symlink(outsideFile, cache.bodyPath(for: linked))
        unlink(cache.bodyPath(for: fifo))
        mkfifo(cache.bodyPath(for: fifo), 0o644)
        // A bucket folder of a third key replaced by a link to a folder outside.
        let victimFolder = directory.appending("outside")
        try FileManager.default.createDirectory(atPath: victimFolder, withIntermediateDirectories: true)
        let keep = directory.write("keep me", to: "outside/\(String(repeating: "a", count: 32))")
        var fake = try URLKey(parsing: "http://example.test/fake0.png")
        var index = 0
        while Buckets.index(of: fake.digest) == Buckets.index(of: linked.digest)
            || Buckets.index(of: fake.digest) == Buckets.index(of: fifo.digest)
        {
            index += 1
            fake = try URLKey(parsing: "http://example.test/fake\(index).png")
        }
        let fakeBucket = directory.appending("cache/entries/\(Buckets.name(Buckets.index(of: fake.digest)))")
        try? FileManager.default.removeItem(atPath: fakeBucket)
        symlink(victimFolder, fakeBucket)

        let reader = try reader()
        let started = ContinuousClock.now
        #expect(reader.entry(for: linked) == nil && reader.servedEntry(linked) == nil)
        #expect(reader.entry(for: fifo) == nil && reader.servedEntry(fifo) == nil)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(try DiskCache.stats(directory: cache.directory).strays >= 2)
        let report = try reader.clean(maxAge: .seconds(86400), maxSize: 0, dryRun: false)
        #expect(report.removedTemp >= 3)
        // The links went, their targets stayed.
        #expect(FileManager.default.fileExists(atPath: outsideFile) && FileManager.default.fileExists(atPath: keep))
        var info = stat()
        #expect(lstat(fakeBucket, &info) != 0 && lstat(cache.bodyPath(for: fifo), &info) != 0)
    }

    @Test("a cache of format 1 or of a later version is named and never read; clean removes format 1 only")
    func otherFormats() throws {
        let old = directory.appending("old")
        try FileManager.default.createDirectory(atPath: old + "/entries/ab", withIntermediateDirectories: true)
        _ = directory.write("x", to: "old/entries/ab/0123456789abcdef0123456789abcdef")
        #expect {
            try DiskCache(directory: old)
        } throws: { ($0 as? CacheError)?.otherFormat == "1" }
        #expect(try DiskCache.removeFormatOne(directory: old) == 1)
        #expect(try DiskCache(directory: old).entry(for: URLKey(parsing: "http://example.test/a.png")) == nil)

        let newer = directory.appending("newer")
        try FileManager.default.createDirectory(atPath: newer, withIntermediateDirectories: true)
        _ = directory.write("sdfetch cache format 5\n", to: "newer/FORMAT")
        #expect {
            try DiskCache(directory: newer)
        } throws: { ($0 as? CacheError)?.otherFormat == "5" && "\($0)".contains("format 5") }
        #expect(try DiskCache.removeFormatOne(directory: newer) == 0)
        #expect(FileManager.default.fileExists(atPath: newer + "/FORMAT"))
    }

    @Test("verify re-hashes every entry, removes the changed one even with its mtime put back, and keeps the rest")
    func verifyRemovesBadEntries() throws {
        let good = try store("good", seed: 7)
        let bad = try store("bad", seed: 8)
        let path = cache.bodyPath(for: bad)
        var bytes = SampleImages.png(seed: 8)
        bytes[bytes.count - 3] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // A careful forger restores the stamp: only hashing can tell.
        setMTime(path, seconds: Int(try #require(cache.entry(for: good)).stamp))
        let report = try reader().verify()
        #expect(report.checked == 2 && report.removed.map(\.url) == [bad.string])
        let after = try reader()
        #expect(after.entry(for: good) != nil && after.entry(for: bad) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("merge folds two shard caches into one; the newer stored time wins; failure records come along")
    func mergeCaches() throws {
        let first = try DiskCache(directory: directory.appending("shard0"), now: clock.read)
        let second = try DiskCache(directory: directory.appending("shard1"), now: clock.read)
        let onlyFirst = try store("one", seed: 1, in: first)
        let shared = try store("shared", seed: 2, in: first)
        clock.advance(by: .seconds(60))
        let onlySecond = try store("two", seed: 3, in: second)
        _ = try store("shared", seed: 4, in: second)
        let gone = try URLKey(parsing: "http://example.test/gone.png")
        FailureBlacklist(cache: second).insert(FetchFailure(.http(404), "server answered 404"), for: gone)

        var report = try cache.merge(from: first.directory)
        #expect(report.merged == 2 && report.bad == 0)
        report = try cache.merge(from: second.directory)
        #expect(report.merged == 2 && report.mergedFailed == 1)
        let merged = try reader()
        for key in [onlyFirst, onlySecond, shared] { #expect(merged.entry(for: key) != nil) }
        #expect(merged.entry(for: shared)?.etag == "\"4\"")
        #expect(merged.entry(for: shared)?.storedAt == clock.now)
        #expect(FailureBlacklist(cache: merged).record(for: gone)?.kind == .http(404))
        // Merging the older one again changes nothing.
        #expect(try cache.merge(from: first.directory).merged == 0)
        #expect(throws: CacheError.self) { try cache.merge(from: cache.directory) }
    }
}

extension DiskCache {
    /// The entry a lookup serves for `key` whatever its age (as `--offline` would), or nil.
    fileprivate func servedEntry(_ key: URLKey) -> CacheEntry? {
        let anyAge = ServePolicy(freshness: Freshness(maxAge: .seconds(1)), isOffline: true)
        guard case .fresh(let entry) = lookup(key, serving: anyAge, now: Date()) else { return nil }
        return entry
    }
}
