import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// Entries with identical bytes share one file (``ContentFile``): counted once, removed
/// with their last entry, and never shared on the word of a forged content name.
@Suite("Identical bytes stored once", .cleansUp)
struct SharedContentTests {
    let directory = TemporaryDirectory("shared")
    let clock = ManualClock()
    let cache: DiskCache

    init() throws {
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, useInterval: .zero)
    }

    private func store(_ name: String, seed: Int) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/\(name).png")
        try cache.store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: nil, lastModified: nil)
        return key
    }

    private func inode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? Int
    }

    private func contentPath(_ bytes: [UInt8]) -> String {
        let sha = bytes.withUnsafeBytes(EntryFile.sha256(of:))
        return directory.appending("cache/content/\(sha.prefix(2))/\(sha)")
    }

    private func lineBytes(_ key: URLKey) throws -> Int64 {
        Int64(IndexRecord.put(key.digest, try #require(cache.entry(for: key))).line.count)
    }

    @Test("the trim frees a shared file only with its last entry, and counts it once")
    func trimRemovesSharedFileLast() throws {
        let image = SampleImages.png(seed: 1)
        let a = try store("a", seed: 1)
        clock.advance(by: .seconds(10))
        let b = try store("b", seed: 1)
        clock.advance(by: .seconds(10))
        let c = try store("c", seed: 2)
        #expect(inode(cache.bodyPath(for: a)) != nil && inode(cache.bodyPath(for: a)) == inode(cache.bodyPath(for: b)))
        #expect(inode(cache.bodyPath(for: a)) != inode(cache.bodyPath(for: c)))
        #expect(cache.entry(for: b)?.stamp == cache.entry(for: a)?.stamp)
        let stats = try DiskCache.stats(directory: cache.directory)
        #expect(stats.savedBytes == Int64(image.count) && stats.entries == 3)

        // The least recently used, a, goes; its file stays for b: only a's line is freed.
        let lineA = try lineBytes(a)
        let first = try cache.enforceLimit(maxBytes: stats.bytes - 1, protecting: [])
        #expect(first.removedEntries == 1 && first.removedBytes == lineA)
        #expect(first.bytes == stats.bytes - lineA)
        #expect(cache.entry(for: a) == nil && cache.entry(for: b) != nil)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: b)) == Data(image))
        #expect(FileManager.default.fileExists(atPath: contentPath(image)))

        // Then b, the last entry naming the file: file, line and content name go.
        let lineB = try lineBytes(b)
        let second = try cache.enforceLimit(maxBytes: first.bytes - 1, protecting: [])
        #expect(second.removedEntries == 1 && second.removedBytes == lineB + Int64(image.count))
        #expect(!FileManager.default.fileExists(atPath: contentPath(image)))
        #expect(cache.entry(for: c) != nil)
        #expect(try DiskCache.stats(directory: cache.directory).savedBytes == 0)
    }

    @Test("clean removes an expired entry and keeps the shared file for a fresh one, then removes it with the last")
    func cleanRemovesSharedFileLast() throws {
        let image = SampleImages.png(seed: 3)
        let old = try store("old", seed: 3)
        clock.advance(by: .seconds(100))
        let fresh = try store("fresh", seed: 3)
        let lineOld = try lineBytes(old)
        let report = try cache.clean(maxAge: .seconds(50), maxSize: nil, dryRun: false)
        #expect(report.removedEntries == 1 && report.removedBytes == lineOld)
        #expect(cache.entry(for: old) == nil)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: fresh)) == Data(image))
        #expect(FileManager.default.fileExists(atPath: contentPath(image)))
        clock.advance(by: .seconds(100))
        let last = try cache.clean(maxAge: .seconds(50), maxSize: nil, dryRun: false)
        #expect(last.removedEntries == 1 && last.entries == 0 && last.bytes == 0)
        #expect(!FileManager.default.fileExists(atPath: contentPath(image)))
    }

    @Test("verify removes every entry whose shared file no longer holds its bytes, hashing the file once")
    func verifyRemovesEverySharer() throws {
        let image = SampleImages.png(seed: 4)
        let keys = try (0..<3).map { try store("v\($0)", seed: 4) }
        let other = try store("other", seed: 5)
        let handle = try #require(FileHandle(forUpdatingAtPath: contentPath(image)))
        try handle.seek(toOffset: 20)
        try handle.write(contentsOf: Data([0xAA]))
        try handle.close()
        let report = cache.verify()
        #expect(report.checked == 4 && report.removed.count == 3)
        #expect(report.checkedBytes == Int64(image.count + SampleImages.png(seed: 5).count))
        #expect(keys.allSatisfy { cache.entry(for: $0) == nil })
        #expect(cache.entry(for: other) != nil)
        #expect(!FileManager.default.fileExists(atPath: contentPath(image)))
        // The same bytes stored again are written anew, not linked to the damaged file.
        let again = try store("v0", seed: 4)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: again)) == Data(image))
    }

    @Test("a forged content file is never shared: the new entry writes its own bytes")
    func forgedContentIgnored() throws {
        let image = SampleImages.png(seed: 6)
        let path = contentPath(image)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var forged = image
        forged[20] ^= 0xFF
        try Data(forged).write(to: URL(fileURLWithPath: path))
        let key = try store("f", seed: 6)
        #expect(FileManager.default.contents(atPath: cache.bodyPath(for: key)) == Data(image))
        #expect(inode(cache.bodyPath(for: key)) != inode(path))
        // clean drops the content name that no entry links.
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.entry(for: key) != nil)
    }
}
