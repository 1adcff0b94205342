import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// A cache directory is untrusted data: forged index lines, oversized buckets, imported
/// entries that lie about their bytes or their time, and folders that merely look like a
/// cache. What could crash runs in a child `sdfetch`, so a trap fails the test, not the suite.
@Suite("forged caches", .cleansUp, .timeLimit(.minutes(2)))
struct ForgedCacheTests {
    let directory = TemporaryDirectory("forged")
    /// Now, in whole seconds: times read back from records compare exactly.
    let clock = ManualClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.sdfetch(arguments, input: input)
    }

    private func store(_ name: String, seed: Int, in cache: DiskCache) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/\(name).png")
        try cache.store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        return key
    }

    /// Appends a put line for `key`'s entry with `stored`, `used` and `bytes` as given, with a
    /// valid check: what a forger who read ``IndexRecord`` writes.
    private func appendForgedPut(_ key: URLKey, in cache: DiskCache, stored: String, used: String, bytes: String) throws
    {
        let entry = try #require(cache.entry(for: key))
        let payload = [
            "P", key.digest.hex, String(entry.stamp), stored, used, bytes, "png", "4", "4", entry.sha256, "", "",
            entry.url,
        ].joined(separator: "\t")
        let check = String(Array(payload.utf8).withUnsafeBytes(IndexRecord.checksum), radix: 16)
        let line = "\n" + String(repeating: "0", count: 16 - check.count) + check + " " + payload + "\n"
        let bucket = cache.directory + "/index/" + Buckets.name(Buckets.index(of: key.digest))
        let handle = try #require(FileHandle(forWritingAtPath: bucket))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        try handle.close()
    }

    @Test("index fields out of bounds are refused when parsed")
    func boundedFields() throws {
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
        let key = try store("a", seed: 1, in: cache)
        let now = String(FileTime.nanoseconds(Date()))
        try appendForgedPut(key, in: cache, stored: now, used: now, bytes: "9223372036854775807")
        try appendForgedPut(key, in: cache, stored: "9223372036854775807", used: now, bytes: "100")
        let reread = try DiskCache(directory: cache.directory, now: clock.read)
        // Both forged lines are damaged lines: the real entry stands.
        #expect(reread.entry(for: key)?.bytes == Int64(SampleImages.png(seed: 1).count))
    }

    @Test("a forged size, a forged time or a 200 GB sparse bucket crash no command")
    func forgedIndexCrashesNothing() async throws {
        let server = try await LoopbackServer()
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let now = String(FileTime.nanoseconds(Date()))
        for (index, forgery) in ["size", "time", "sparse"].enumerated() {
            let path = directory.appending("cache-\(forgery)")
            let cache = try DiskCache(directory: path)
            let key = try store("a\(index)", seed: index, in: cache)
            switch forgery {
            case "size": try appendForgedPut(key, in: cache, stored: now, used: now, bytes: "9223372036854775807")
            case "time": try appendForgedPut(key, in: cache, stored: "9223372036854775807", used: now, bytes: "100")
            default:
                let bucket = open(path + "/index/61", O_WRONLY | O_CREAT, 0o644)
                #expect(ftruncate(bucket, 200 << 30) == 0)
                close(bucket)
            }
            for command in [["clean"], ["stats"], ["verify"], ["merge", path], []] {
                let target = command.first == "merge" ? directory.appending("into-\(forgery)") : path
                let run = try await sdfetch(command + ["--cache-dir", target], input: server.url("/b.png") + "\n")
                #expect(run.status <= 1, "\(forgery): sdfetch \(command.joined(separator: " ")): \(run.standardError)")
            }
        }
    }

    @Test("merge refuses bytes that are not the image their record claims, and never imports a future time")
    func mergeJudgesWhatItImports() throws {
        let mine = try DiskCache(directory: directory.appending("mine"), now: clock.read)
        let source = try DiskCache(directory: directory.appending("source"), now: clock.read)
        let key = try store("a", seed: 1, in: mine)
        let good = try #require(mine.entry(for: key))
        // Later than the good entry, even once the future time is taken as now.
        clock.advance(by: .seconds(1))
        let html = Array("<html><body>not an image</body></html>".utf8)
        let future = Date(timeIntervalSince1970: 4_102_444_700)
        let forged = CacheEntry(
            url: key.redacted, storedAt: future, accessedAt: future, format: .png, bytes: Int64(html.count),
            sha256: html.withUnsafeBytes(EntryFile.sha256(of:)), stamp: EntryFile.stamp(for: future))
        try source.write(forged, key.digest, bytes: html)
        let other = try URLKey(parsing: "http://example.test/b.png")
        let png = SampleImages.png(seed: 2)
        let honestButLate = CacheEntry(
            url: other.redacted, storedAt: future, accessedAt: future, format: .png, bytes: Int64(png.count),
            sha256: png.withUnsafeBytes(EntryFile.sha256(of:)), stamp: EntryFile.stamp(for: future))
        try source.write(honestButLate, other.digest, bytes: png)
        let record = FailureRecord(url: "http://example.test/c.png", kind: .http(404), detail: "x", recordedAt: future)
        #expect(FailureBlacklist(cache: source).write(record, for: try URLKey(parsing: record.url).digest))

        let report = try mine.merge(from: source.directory)

        #expect(report.bad == 1 && report.merged == 1)
        let reread = try DiskCache(directory: mine.directory, now: clock.read)
        #expect(reread.entry(for: key)?.sha256 == good.sha256)
        let imported = try #require(reread.entry(for: other))
        #expect(imported.storedAt <= clock.now && imported.accessedAt <= clock.now)
        #expect(FailureBlacklist(cache: reread).all().allSatisfy { $0.record.recordedAt <= clock.now })
        // An entry over the byte budget is not even read.
        let small = try DiskCache(directory: directory.appending("small"), now: clock.read)
        let budgeted = try small.merge(from: source.directory, maxBytes: 10)
        #expect(budgeted.merged == 0 && budgeted.bad == 2)
    }

    @Test("clean removes a failure record dated in the future, whatever --max-age")
    func futureRecordsExpire() throws {
        let cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
        let future = Date(timeIntervalSince1970: 4_102_444_700)
        let record = FailureRecord(url: "http://example.test/c.png", kind: .http(404), detail: "x", recordedAt: future)
        #expect(FailureBlacklist(cache: cache).write(record, for: try URLKey(parsing: record.url).digest))

        let report = try cache.clean(maxAge: .seconds(1), maxSize: nil, dryRun: false)

        #expect(report.removedFailed == 1)
    }

    @Test("clean leaves a user's folder that merely has entries/ and tmp/ alone, and --dry-run lists format 1")
    func cleanRequiresEvidence() async throws {
        let project = directory.appending("proj")
        try FileManager.default.createDirectory(atPath: project + "/entries", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: project + "/tmp/work", withIntermediateDirectories: true)
        let notes = directory.write("x", to: "proj/tmp/work/notes.txt")
        let run = try await sdfetch(["clean", "--cache-dir", project])

        #expect(run.status != 0)
        #expect(FileManager.default.fileExists(atPath: notes))
        #expect(run.standardError.contains("not an sdfetch cache"))

        let old = directory.appending("old")
        try FileManager.default.createDirectory(atPath: old + "/entries/ab", withIntermediateDirectories: true)
        _ = directory.write("x", to: "old/entries/ab/0123456789abcdef0123456789abcdef")
        let dryRun = try await sdfetch(["clean", "--dry-run", "--cache-dir", old])

        #expect(dryRun.status == 0)
        #expect(dryRun.standardOutput.contains("would remove a cache of the previous on-disk format (1)"))
        #expect(FileManager.default.fileExists(atPath: old + "/entries/ab/0123456789abcdef0123456789abcdef"))
    }

    @Test("a cache writable by every user, or owned by another, is named in a warning")
    func untrustedCacheWarns() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let path = directory.appending("cache")
        let first = try await sdfetch(["--cache-dir", path], input: server.url("/a.png"))
        #expect(!first.standardError.contains("warning"))
        chmod(path, 0o777)
        let open = try await sdfetch(["--cache-dir", path], input: server.url("/a.png"))
        chmod(path, 0o755)

        #expect(open.status == 0 && open.standardError.contains("writable by every user"))
        // Giving a folder away takes root.
        if geteuid() == 0 {
            chown(path + "/entries", 65534, 65534)
            let foreign = try await sdfetch(["--cache-dir", path], input: server.url("/a.png"))
            #expect(foreign.status == 0 && foreign.standardError.contains("owned by user 65534"))
        }
    }
}
