import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// What concurrent maintenance and a forged cache directory must not break: entries kept
/// and shared through replacements, `clean` judging content files and temporaries by what
/// is really there, pins and `--max-bytes` held on hits, and times that cannot trap.
@Suite("cache safety", .cleansUp, .timeLimit(.minutes(3)))
struct CacheSafetyTests {
    let directory = TemporaryDirectory("cache-safety")

    private func store(_ name: String, _ body: [UInt8], in cache: DiskCache) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/\(name).png")
        try cache.store(body, for: key, image: VerifiedImage(format: .png), etag: nil, lastModified: nil)
        return key
    }

    private func inode(_ path: String) -> UInt64? {
        var info = stat()
        return lstat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    private func contentPath(_ cache: DiskCache, _ sha256: String) -> String {
        cache.directory + "/content/" + sha256.prefix(2) + "/" + sha256
    }

    private func names(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { name in
            var info = stat()
            return lstat(path + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR
        }
    }

    // MARK: - Replacements, content files, temporaries

    @Test("replacing an entry with the same bytes (a re-download, a merge of a renewed copy) keeps sharing its file")
    func replacementsShare() throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        let body = SampleImages.png(seed: 3)
        let key = try store("a", body, in: cache)
        let sha = try #require(cache.entry(for: key)).sha256
        #expect(inode(cache.bodyPath(for: key)) == inode(contentPath(cache, sha)))
        // A server that ignores conditional requests sends the same bytes again.
        _ = try store("a", body, in: cache)
        #expect(inode(cache.bodyPath(for: key)) == inode(contentPath(cache, sha)))

        // A renewed copy of the same bytes merged back into the original.
        let copy = try DiskCache(directory: directory.appending("copy"), now: { Date() + 5 })
        _ = try store("a", body, in: copy)
        _ = try store("b", body, in: cache)
        let report = try cache.merge(from: copy.directory)
        #expect(report.merged == 1)
        #expect(inode(cache.bodyPath(for: key)) == inode(contentPath(cache, sha)))
        var info = stat()
        #expect(lstat(contentPath(cache, sha), &info) == 0 && info.st_nlink == 3)
    }

    @Test("clean drops a content file whose entries are gone though an -o --link output still links it")
    func contentLinkedOnlyFromOutside() throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        let key = try store("a", SampleImages.png(seed: 4), in: cache)
        let sha = try #require(cache.entry(for: key)).sha256
        try FileManager.default.createDirectory(atPath: directory.appending("out"), withIntermediateDirectories: true)
        #expect(link(cache.bodyPath(for: key), directory.appending("out/a.png")) == 0)

        let report = try cache.clean(maxAge: .zero, maxSize: nil, dryRun: false)

        #expect(report.removedEntries == 1)
        #expect(inode(contentPath(cache, sha)) == nil)
        #expect(
            FileManager.default.contents(atPath: directory.appending("out/a.png")) == Data(SampleImages.png(seed: 4)))
    }

    @Test("clean removes a killed writer's temporary at once and keeps a live writer's")
    func deadWritersTemporaries() throws {
        let grace = Duration.milliseconds(200)
        let cache = try DiskCache(directory: directory.appending("cache"), waits: CacheWaits(writerGrace: grace))
        let dead = cache.directory + "/tmp/" + FileIO.temporaryName()
        let live = cache.directory + "/tmp/" + FileIO.temporaryName()
        let bucketDead = cache.directory + "/entries/ab/" + FileIO.temporaryName()
        try FileManager.default.createDirectory(
            atPath: cache.directory + "/entries/ab", withIntermediateDirectories: true)
        for path in [dead, live, bucketDead] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        }
        let writer = open(live, O_WRONLY)
        defer { close(writer) }
        WriterTemporary.hold(writer)
        Thread.sleep(forTimeInterval: grace.timeInterval + 0.2)

        let report = try cache.clean(maxAge: .seconds(3600), maxSize: nil, dryRun: false)

        #expect(report.removedTemp == 2)
        #expect(inode(dead) == nil && inode(bucketDead) == nil)
        #expect(inode(live) != nil)
    }

    // MARK: - Merge

    @Test("merge refuses an entry filed under another URL's digest, and counts its own full disk as its failure")
    func mergeChecksPairingAndWrites() async throws {
        let source = try DiskCache(directory: directory.appending("source"))
        let honest = try URLKey(parsing: "http://example.test/honest.png")
        let other = try URLKey(parsing: "http://example.test/other.png")
        let body = SampleImages.png(seed: 5)
        let entry = CacheEntry(
            url: honest.redacted, storedAt: Date(), accessedAt: Date(), format: .png, bytes: Int64(body.count),
            sha256: body.withUnsafeBytes(EntryFile.sha256(of:)), stamp: EntryFile.stamp(for: Date()))
        try source.write(entry, other.digest, bytes: body)
        let mine = try DiskCache(directory: directory.appending("mine"))

        let report = try mine.merge(from: source.directory)

        #expect(report.bad == 1 && report.merged == 0)
        #expect(mine.entry(for: other) == nil && mine.entry(for: honest) == nil)

        // A destination that refuses writes (a file-size limit: EFBIG, as a full disk's
        // ENOSPC) is the destination's failure: exit 3, said, and no source entry `bad`.
        let big = try DiskCache(directory: directory.appending("big"))
        for index in 0..<3 {
            _ = try store("big\(index)", SampleImages.png(width: 256, height: 256, seed: index), in: big)
        }
        let target = directory.appending("target")
        _ = try DiskCache(directory: target)
        let binary = BuiltProduct.path("sdfetch")
        let run = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", "ulimit -f 8; trap '' XFSZ; exec \"$0\" merge --no-config --cache-dir \"$1\" \"$2\"", binary,
                target,
                big.directory,
            ])
        #expect(run.status == 3, "\(run.standardError)")
        #expect(
            run.standardError.contains("merge stopped") && run.standardError.contains("file too large"),
            "\(run.standardError)")
        #expect(!run.standardOutput.contains("1 bad") && !run.standardOutput.contains("3 bad"))
    }

    // MARK: - Hits: pins, --max-bytes, sparse files

    @Test("a pinned hit hashes the file: one byte changed with size and stamp put back is not served")
    func pinnedHitHashesTheFile() throws {
        let body = SampleImages.png(seed: 6)
        let fetcher = try Fetcher.forTesting(in: directory, now: Date.init) { $0.offline = true }
        let key = try store("a", body, in: fetcher.cache)
        let entry = try #require(fetcher.cache.entry(for: key))
        let path = fetcher.cache.bodyPath(for: key)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(body.count - 5))
        try handle.write(contentsOf: Data([0x42]))
        try handle.close()
        var times = [timespec(tv_sec: 0, tv_nsec: Int((1 << 30) - 2)), timespec(tv_sec: Int(entry.stamp), tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)

        guard case .answered(let result) = fetcher.probe(key, spelling: key.string, pin: entry.sha256) else {
            Issue.record("an offline pinned probe always answers")
            return
        }

        #expect(result.status == .failed && result.failure?.kind == .hashMismatch)
        #expect(result.sha256 != entry.sha256 && result.sha256?.count == 64)
        // The intact file is served, hashed, and held for delivery.
        _ = try store("b", body, in: fetcher.cache)
        let good = try URLKey(parsing: "http://example.test/b.png")
        guard case .answered(let hit) = fetcher.probe(good, spelling: good.string, pin: entry.sha256) else {
            Issue.record("a pinned hit answers")
            return
        }
        #expect(hit.status == .cached && hit.heldImage != nil)
    }

    @Test("an entry over --max-bytes is not served, and a sparse entry file is no entry")
    func hitsHeldToMaxBytes() throws {
        let fetcher = try Fetcher.forTesting(in: directory, now: Date.init) {
            $0.offline = true
            $0.maxBytes = 100
        }
        let key = try store("a", SampleImages.png(width: 64, height: 64, seed: 7), in: fetcher.cache)
        guard case .answered(let result) = fetcher.probe(key, spelling: key.string) else {
            Issue.record("an offline probe of an entry answers")
            return
        }
        #expect(result.status == .failed && result.failure?.kind == .tooLarge)

        // A forged sparse entry: the PNG signature, then a hole, recorded at its size.
        let cache = fetcher.cache
        let sparse = try store("sparse", SampleImages.png(seed: 8), in: cache)
        let entry = try #require(cache.entry(for: sparse))
        let path = cache.bodyPath(for: sparse)
        #expect(unlink(path) == 0)
        let fd = open(path, O_WRONLY | O_CREAT, 0o644)
        #expect(write(fd, SampleImages.png(seed: 8), 8) == 8)
        #expect(ftruncate(fd, 64 << 20) == 0)
        close(fd)
        var forged = entry
        forged.bytes = 64 << 20
        var times = [timespec(tv_sec: 0, tv_nsec: Int((1 << 30) - 2)), timespec(tv_sec: Int(entry.stamp), tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(cache.isIntact(entry, sparse.digest) == false)
        #expect(cache.isIntact(forged, sparse.digest) == false)
    }

    // MARK: - Times

    @Test("file times after 2262, failure records at +-2^63 and a stamp of 99999999999 trap no command")
    func timesOutOfRange() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 9)))
        let path = directory.appending("cache")
        let cache = try DiskCache(directory: path)
        let key = try store("a", SampleImages.png(seed: 10), in: cache)
        // A stray file dated 2400 in a bucket folder, and one in tmp/.
        let stray = path + "/entries/00/00000000000000000000000000000000"
        try FileManager.default.createDirectory(atPath: path + "/entries/00", withIntermediateDirectories: true)
        for file in [stray, path + "/tmp/1-2.tmp"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            var times = [timespec(tv_sec: 13_569_465_600, tv_nsec: 0), timespec(tv_sec: 13_569_465_600, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
        }
        // Failure records dated 2^63 - 1 and -2^63 ns, for the URL fetched and another.
        let fetched = try URLKey(parsing: server.url("/a.png"))
        for (url, time) in [
            (server.url("/a.png"), "9223372036854775807"), ("http://example.test/z.png", "-9223372036854775808"),
        ] {
            let digest = try URLKey(parsing: url).digest
            let folder = path + "/failed/" + Buckets.name(Buckets.index(of: digest))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let text = "sdfetch-failure 1\n\(try URLKey(parsing: url).redacted)\n\(time)\nhttp-404\nx\nend\n"
            #expect(FileManager.default.createFile(atPath: folder + "/" + digest.hex, contents: Data(text.utf8)))
        }
        // A put line whose stamp is 99999999999.
        let entry = try #require(cache.entry(for: key))
        let payload = [
            "P", key.digest.hex, "99999999999", String(FileTime.nanoseconds(entry.storedAt)),
            String(FileTime.nanoseconds(entry.accessedAt)), String(entry.bytes), "png", "4", "4", entry.sha256, "", "",
            entry.url,
        ].joined(separator: "\t")
        let check = String(Array(payload.utf8).withUnsafeBytes(IndexRecord.checksum), radix: 16)
        let line = "\n" + String(repeating: "0", count: 16 - check.count) + check + " " + payload + "\n"
        let bucket = try #require(
            FileHandle(forWritingAtPath: path + "/index/" + Buckets.name(Buckets.index(of: key.digest))))
        try bucket.seekToEnd()
        try bucket.write(contentsOf: Data(line.utf8))
        try bucket.close()

        for command in [["stats"], ["verify"], ["merge", path], [], ["clean"]] {
            let target = command.first == "merge" ? directory.appending("into") : path
            let run = try await ProcessRun.sdfetch(command + ["--cache-dir", target], input: fetched.string + "\n")
            #expect(run.status <= 1, "sdfetch \(command.joined(separator: " ")): \(run.status) \(run.standardError)")
        }
        #expect(inode(stray) == nil && inode(path + "/tmp/1-2.tmp") == nil)
    }

    // MARK: - A forged table header

    @Test(
        "a sparse bucket of 200 GiB with a plausible table header crashes no lookup, and clean drops its zeros",
        arguments: [IndexTable.Layout.blocks, .lines])
    func forgedTableHeader(layout: IndexTable.Layout) async throws {
        let path = directory.appending("cache")
        let cache = try DiskCache(directory: path)
        let key = try store("a", SampleImages.png(seed: 11), in: cache)
        let name = Buckets.name(Buckets.index(of: key.digest))
        let size = 200 << 30
        let fd = open(path + "/index/" + name, O_WRONLY | O_TRUNC)
        var header = layout.magic
        withUnsafeBytes(of: Int64((size - 64) / layout.rowSize * layout.rowLines).bigEndian) { header += $0 }
        withUnsafeBytes(of: Int64(size).bigEndian) { header += $0 }
        #expect(write(fd, header, header.count) == header.count)
        #expect(ftruncate(fd, off_t(size)) == 0)
        close(fd)

        let offline = try await ProcessRun.sdfetch(["--offline", "--cache-dir", path], input: key.string + "\n")
        #expect(offline.status <= 1, "\(offline.status) \(offline.standardError)")
        let located = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["path", "--no-config", "--cache-dir", path, key.string])
        #expect(located.status <= 1, "\(located.status) \(located.standardError)")
        let clean = try await ProcessRun.sdfetch(["clean", "--cache-dir", path])
        #expect(clean.status == 0, "\(clean.standardError)")
        var info = stat()
        #expect(stat(path + "/index/" + name, &info) == 0 && info.st_size < 1 << 20)
    }
}
