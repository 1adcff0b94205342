import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The index's sorted tables (<doc:OnDiskFormat#Index-tables>): a compacted table plus a log
/// tail answers as a full parse does, a lookup reads only its own bucket and line, damage
/// stays in its bucket, a tail that outgrows its limit is folded into the table by the run
/// that grew it, and a format-2 cache is read and converted.
@Suite("Index tables", .cleansUp)
struct IndexTableTests {
    let directory = TemporaryDirectory("tables")
    let clock = ManualClock()
    let cache: DiskCache

    init() throws {
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read, useInterval: .zero)
    }

    private func key(_ name: String) throws -> URLKey { try URLKey(parsing: "http://example.test/\(name).png") }

    @discardableResult
    private func store(_ key: URLKey, seed: Int, etag: String? = nil, in cache: DiskCache? = nil) throws -> URLKey {
        try (cache ?? self.cache).store(
            SampleImages.png(seed: seed), for: key, image: VerifiedImage(format: .png, width: 4, height: 4),
            etag: etag, lastModified: nil)
        return key
    }

    private func reader() throws -> DiskCache {
        try DiskCache(directory: cache.directory, now: clock.read, useInterval: .zero)
    }

    private func bucketPath(_ index: Int) -> String { cache.directory + "/index/" + Buckets.name(index) }

    private func bucketBytes(_ index: Int) throws -> [UInt8] {
        [UInt8](try #require(FileManager.default.contents(atPath: bucketPath(index))))
    }

    /// What a full parse of bucket `index`'s whole file says, independently of the lookups.
    private func fullParse(_ index: Int) throws -> [KeyDigest: CacheEntry] {
        let bytes = try bucketBytes(index)
        let end = (bytes.lastIndex(of: 0x0A) ?? -1) + 1
        return bytes.withUnsafeBytes { IndexBucket.entries(in: $0, upTo: end) }
    }

    /// `count` keys whose digests fall in bucket `bucket`: candidates are hashed as they
    /// are (they are written normalised) and only the hits parsed, so a search of some
    /// 256 candidates per key stays cheap.
    private func keys(_ count: Int, inBucket bucket: Int, prefix: String = "k") throws -> [URLKey] {
        var found: [URLKey] = []
        var index = 0
        while found.count < count {
            let text = "http://example.test/\(prefix)\(index).png"
            index += 1
            guard Buckets.index(of: KeyDigest(of: text)) == bucket else { continue }
            let key = try URLKey(parsing: text)
            #expect(key.digest == KeyDigest(of: text))
            found.append(key)
        }
        return found
    }

    /// Appends `lines` to bucket `bucket`'s file, as another writer would.
    private func append(_ lines: [UInt8], toBucket bucket: Int) throws {
        let handle = try #require(FileHandle(forWritingAtPath: bucketPath(bucket)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines))
        try handle.close()
    }

    /// Put lines of `count` made-up entries of bucket `bucket`, each like `template` with a
    /// URL `padding` long: filler for a large bucket, with no key to search for.
    private func fillerLines(_ count: Int, inBucket bucket: Int, like template: CacheEntry, padding: Int) -> [UInt8] {
        (0..<count).flatMap { index -> [UInt8] in
            var entry = template
            entry.url = "http://filler.test/\(index)/" + String(repeating: "x", count: padding)
            let digest = KeyDigest(high: UInt64(bucket) << 56 | UInt64(index) << 8, low: UInt64(index))
            return IndexRecord.put(digest, entry).line
        }
    }

    @Test("a compacted table plus a log tail gives the answers of a full parse, and of the log before compaction")
    func tableAndTailAgree() throws {
        let keys = try (0..<120).map { try key("e\($0)") }
        for (seed, key) in keys.enumerated() { try store(key, seed: seed, etag: "\"\(seed)\"") }
        clock.advance(by: .seconds(10))
        for key in keys.prefix(40) { cache.touch(key) }
        cache.flushUses()
        let before = try reader()
        let answers = keys.map { before.entry(for: $0) }
        #expect(answers.allSatisfy { $0 != nil })

        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let buckets = Set(keys.map { Buckets.index(of: $0.digest) })
        for bucket in buckets { #expect(try bucketBytes(bucket).starts(with: IndexTable.magic)) }
        let compacted = try reader()
        #expect(keys.map { compacted.entry(for: $0) } == answers)

        // A tail over the tables: replacements, uses, new entries.
        clock.advance(by: .seconds(10))
        for key in keys[30..<50] { try store(key, seed: 500 + keys.firstIndex(of: key)!, in: compacted) }
        clock.advance(by: .seconds(10))
        for key in keys[60..<80] { compacted.touch(key) }
        let fresh = try (0..<10).map { try store(key("new\($0)"), seed: 900 + $0, in: compacted) }
        compacted.flushUses()
        let all = keys + fresh
        let final = try reader()
        for key in all {
            let bucket = Buckets.index(of: key.digest)
            let expected = try fullParse(bucket)[key.digest]
            #expect(expected != nil && final.entry(for: key) == expected)
            #expect(compacted.entry(for: key) == expected)
        }
        #expect(final.entry(for: keys[65])?.accessedAt == clock.now)
        #expect(
            final.entry(for: keys[35])?.sha256 == SampleImages.png(seed: 535).withUnsafeBytes(EntryFile.sha256(of:)))
    }

    @Test("verify and a trim drop the lines of the entries they removed, young ones too; a later store's stays")
    func removalsDropTheirLines() throws {
        let bucket = 0x17
        let real = try keys(4, inBucket: bucket)
        for (seed, key) in real.enumerated() { try store(key, seed: seed) }
        func hasLine(_ key: URLKey) throws -> Bool {
            String(decoding: try bucketBytes(bucket), as: UTF8.self).contains(key.digest.hex)
        }
        // Same size, other bytes: verify removes the entry, and its line with it.
        let path = cache.bodyPath(for: real[0])
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(cache.verify().removed.count == 1)
        #expect(try !hasLine(real[0]) && hasLine(real[1]))
        // A trim to nothing removes the rest, lines too.
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: 1, dryRun: false)
        for key in real { #expect(try !hasLine(key) && reader().entry(for: key) == nil) }
        // A store after the removal is an entry again.
        try store(real[0], seed: 9)
        #expect(try hasLine(real[0]) && reader().entry(for: real[0]) != nil)
    }

    /// `count` stored keys of bucket `bucket`, compacted by `clean` into a table with 700
    /// filler entries of long URLs: a file past the limit a bucket file is kept whole under.
    private func largeBucket(_ bucket: Int, keys count: Int) throws -> [URLKey] {
        let real = try keys(count, inBucket: bucket)
        for (seed, key) in real.enumerated() { try store(key, seed: seed) }
        let template = try #require(cache.entry(for: real[0]))
        try append(fillerLines(700, inBucket: bucket, like: template, padding: 200), toBucket: bucket)
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        return real
    }

    @Test("a bucket past the whole-file limit is read line by line: a damaged line loses its own entry only")
    func largeBucketReadsItsLine() throws {
        let bucket = 0x42
        let real = try largeBucket(bucket, keys: 8)
        // clean keeps the young lines (a writer may be about to name their files): all 708.
        var bytes = try bucketBytes(bucket)
        let table = try #require(bytes.withUnsafeBytes { IndexTable(file: $0) })
        #expect(table.count == 708 && table.fenceCount == 45 && bytes.count > IndexBucket.wholeFileLimit)

        // Damage one real entry's line inside the table.
        let read = try #require(table.firstRead(for: real[3].digest) { $0 })
        #expect(read.count < 400)
        let line = try #require(bytes[read].withUnsafeBytes { table.locate(real[3].digest, in: $0) })
        bytes[read.lowerBound + line.line.lowerBound + 40] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: bucketPath(bucket)))
        let reader = try reader()
        for (index, key) in real.enumerated() {
            let entry = reader.entry(for: key)
            if index == 3 {
                #expect(entry == nil)
            } else {
                #expect(
                    entry?.url == key.redacted
                        && entry?.sha256 == SampleImages.png(seed: index).withUnsafeBytes(EntryFile.sha256(of:)))
            }
        }
    }

    @Test("a large bucket's lookups read through the descriptor its load opened and handed over")
    func largeBucketKeepsItsDescriptor() throws {
        let bucket = 0x43
        let real = try largeBucket(bucket, keys: 4)
        #expect(try bucketBytes(bucket).count > IndexBucket.wholeFileLimit)

        // Held: the bucket owns the descriptor and needs no other for its lookups.
        var held = IndexBucket()
        let adopted = held.read(from: open(bucketPath(bucket), O_RDONLY), holding: true)
        #expect(adopted)
        for key in real {
            #expect(!held.needsFile(for: key.digest))
            #expect(held.entry(for: key.digest)?.url == key.redacted)
        }
        // Not held: the caller keeps its descriptor and passes it to each lookup.
        var passed = IndexBucket()
        let fd = open(bucketPath(bucket), O_RDONLY)
        defer { close(fd) }
        let kept = passed.read(from: fd, holding: false)
        #expect(!kept)
        for key in real {
            #expect(passed.needsFile(for: key.digest))
            #expect(passed.entry(for: key.digest) == nil)
            #expect(passed.entry(for: key.digest, file: fd)?.url == key.redacted)
        }
    }

    @Test("the index file a cache holds open for a large bucket's lookups is close-on-exec")
    func heldIndexFileIsCloseOnExec() throws {
        let bucket = 0x44
        let real = try largeBucket(bucket, keys: 2)
        let reader = try reader()
        #expect(reader.entry(for: real[1])?.url == real[1].redacted)
        // This test's bucket file, among every descriptor of the process (other tests' files
        // have other paths).
        let resolved = try #require(realpath(bucketPath(bucket), nil))
        defer { free(resolved) }
        let path = String(cString: resolved)
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name -> Int32? in
            guard let fd = Int32(name),
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) == path
            else { return nil }
            return fd
        }
        #expect(held.count == (BucketFolders.limitAllowsHolding ? 1 : 0))
        for fd in held { #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0) }
        withExtendedLifetime(reader) {}
    }

    @Test("a compaction keeping every entry merges the tail into the table byte for byte as a full parse writes it")
    func mergedTableMatchesFullCompaction() throws {
        let bucket = 0x2C
        let stored = try keys(60, inBucket: bucket, prefix: "merge-")
        for (seed, key) in stored.enumerated() { try store(key, seed: seed) }
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let table = try bucketBytes(bucket)
        let entries = try fullParse(bucket)
        func put(_ key: URLKey, usedAt seconds: Double) throws -> [UInt8] {
            var entry = try #require(entries[key.digest])
            entry.accessedAt = entry.storedAt.addingTimeInterval(seconds)
            return IndexRecord.put(key.digest, entry).line
        }
        func use(_ key: URLKey, at seconds: Double) throws -> [UInt8] {
            let storedAt = try #require(entries[key.digest]).storedAt
            return IndexRecord.use(key.digest, usedAt: FileTime.nanoseconds(storedAt.addingTimeInterval(seconds))).line
        }
        let newcomers = try keys(4, inBucket: bucket, prefix: "merge-new-")
        for (seed, key) in newcomers.enumerated() { try store(key, seed: 100 + seed) }
        let newLines = try bucketBytes(bucket).suffix(from: table.count)
        var tail: [UInt8] = Array(newLines)
        tail += try use(stored[1], at: 50)  // a table entry used
        tail += try use(stored[2], at: 40) + put(stored[2], usedAt: 5)  // used, then replaced
        tail += try put(stored[3], usedAt: 7) + use(stored[3], at: 60)  // replaced, then used
        tail += try use(stored[4], at: 1)  // a use older than the slot's
        tail += Array("\n0000000000000000 P\tgarbage\n".utf8)  // a damaged line
        tail += try use(stored[5], at: 30)
        tail += try put(stored[3], usedAt: 9)  // replaced again: the last put wins
        tail += IndexRecord.use(KeyDigest(high: UInt64(bucket) << 56, low: 1), usedAt: 1).line  // a use of nothing
        let file = table + tail
        let (merged, full) = file.withUnsafeBytes { raw -> ([UInt8]?, [UInt8]) in
            let parsed = IndexBucket.latestPuts(in: raw, upTo: raw.count)
            let full = IndexTable.file(parsed.puts.map { ($0.key, $0.value.line, $0.value.summary.usedAt) }, from: raw)
            return (IndexTable.merged(raw, table: parsed.table!, upTo: raw.count), full)
        }
        let isSame = merged == full
        #expect(isSame)
        #expect(merged.map { $0.withUnsafeBytes { IndexTable(file: $0)?.count } } == stored.count + newcomers.count)
        // A table whose lines are out of order is left to the full parse: its first line,
        // checked and of the same length, names the digest that sorts last.
        let parsedTable = try #require(table.withUnsafeBytes { IndexTable(file: $0) })
        var lines: [Range<Int>] = []
        table.withUnsafeBytes { raw in parsedTable.forEachLine(in: raw) { range, _ in lines.append(range) } }
        let first = try #require(lines.first).lowerBound
        let sortedKeys = stored.sorted { ($0.digest.high, $0.digest.low) < ($1.digest.high, $1.digest.low) }
        let forged = IndexRecord.put(sortedKeys.last!.digest, try #require(entries[sortedKeys[0].digest])).line
            .dropFirst().dropLast()
        var disordered = table
        disordered.replaceSubrange(first..<(first + forged.count), with: forged)
        #expect(disordered.withUnsafeBytes { $0.prefix(first + forged.count + 1).last } == 0x0A)
        #expect(disordered.withUnsafeBytes { IndexTable.merged($0, table: parsedTable, upTo: $0.count) } == nil)
    }

    /// A table as format-4 caches before this layout hold it ("sdfetch-table-3": blocks of
    /// 8 use slots and 8 lines, a fence row of digest and offset per block), written from
    /// the lines of `file` as its full parse finds them.
    private func blockTable(of file: [UInt8]) -> [UInt8] {
        file.withUnsafeBytes { raw -> [UInt8] in
            let puts = IndexBucket.latestPuts(in: raw, upTo: raw.count).puts
                .sorted { ($0.key.high, $0.key.low) < ($1.key.high, $1.key.low) }
            func integer(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
            let rows = (puts.count + 7) / 8
            var fence: [UInt8] = []
            var blocks: [UInt8] = []
            for start in stride(from: 0, to: puts.count, by: 8) {
                let block = puts[start..<min(start + 8, puts.count)]
                fence +=
                    integer(Int64(bitPattern: block.first!.key.high)) + integer(Int64(bitPattern: block.first!.key.low))
                fence += integer(Int64(32 + rows * 24 + blocks.count))
                for slot in 0..<8 {
                    blocks += integer(slot < block.count ? block[start + slot].value.summary.usedAt : 0)
                }
                for put in block { blocks += [0x0A] + raw[put.value.line] + [0x0A] }
            }
            return IndexTable.blockMagic + integer(Int64(puts.count)) + integer(Int64(32 + fence.count + blocks.count))
                + fence + blocks
        }
    }

    @Test("a table of the layout before (blocks of 8 lines) is read and used as it is, and rewritten by compaction")
    func blockLayoutTable() throws {
        let bucket = 0x51
        let real = try keys(8, inBucket: bucket)
        for (seed, key) in real.enumerated() { try store(key, seed: seed) }
        let template = try #require(cache.entry(for: real[0]))
        try append(fillerLines(600, inBucket: bucket, like: template, padding: 200), toBucket: bucket)
        let old = blockTable(of: try bucketBytes(bucket))
        try Data(old).write(to: URL(fileURLWithPath: bucketPath(bucket)))
        let table = try #require(old.withUnsafeBytes { IndexTable(file: $0) })
        #expect(table.layout == .blocks && table.count == 608 && old.count > IndexBucket.wholeFileLimit)
        #expect(table.firstRead(for: real[2].digest) { $0 }.map { $0.count > 1000 } == true)
        // Read from the file a block at a time, as a full parse reads it; a use is written in place.
        let full = try fullParse(bucket)
        let reader = try reader()
        for key in real { #expect(reader.entry(for: key) != nil && reader.entry(for: key) == full[key.digest]) }
        clock.advance(by: .seconds(10))
        reader.touch(real[5])
        reader.flushUses()
        #expect(try bucketBytes(bucket).count == old.count)
        #expect(try self.reader().entry(for: real[5])?.accessedAt == clock.now)
        // A run's compaction (a log past its limit) merges it into the line layout.
        try append(fillerLines(60, inBucket: bucket, like: template, padding: 300), toBucket: bucket)
        let writer = try self.reader()
        #expect(writer.entry(for: real[1])?.url == real[1].redacted)
        let after = try bucketBytes(bucket)
        #expect(after.starts(with: IndexTable.magic))
        for key in real { #expect(writer.entry(for: key)?.url == key.redacted) }
        #expect(try self.reader().entry(for: real[5])?.accessedAt == clock.now)
        #expect(try fullParse(bucket).count == 608)
    }

    @Test("the fence search from a guessed row finds the row a plain count finds, sorted or forged")
    func fenceSearchMatchesCount() {
        var generator = SeededRandom("fence search")
        func fence(_ firsts: [KeyDigest]) -> [UInt8] {
            firsts.flatMap { first in
                [first.high, first.low, 0].flatMap { value in withUnsafeBytes(of: value.bigEndian, Array.init) }
            }
        }
        func probes(_ firsts: [KeyDigest]) -> [KeyDigest] {
            let random = (0..<200).map { _ in
                KeyDigest(
                    high: 0x3A00_0000_0000_0000 | UInt64.random(in: 0..<(1 << 56), using: &generator),
                    low: .random(in: 0...UInt64.max, using: &generator))
            }
            let near = firsts.flatMap {
                [$0, KeyDigest(high: $0.high, low: $0.low &- 1), KeyDigest(high: $0.high &+ 1, low: 0)]
            }
            return random + near + [KeyDigest(high: 0, low: 0), KeyDigest(high: .max, low: .max)]
        }
        for rows in [0, 1, 15, 16, 17, 100, 1000] {
            var firsts = (0..<rows).map { _ in
                KeyDigest(
                    high: 0x3A00_0000_0000_0000 | UInt64.random(in: 0..<(1 << 56), using: &generator),
                    low: .random(in: 0...UInt64.max, using: &generator))
            }
            firsts.sort { ($0.high, $0.low) < ($1.high, $1.low) }
            // Clustered rows put the guess far from the answer.
            if rows == 1000 {
                for index in 0..<500 { firsts[index] = KeyDigest(high: 0x3A00_0000_0000_0000 + UInt64(index), low: 0) }
            }
            // Rows whose first 8 bytes are equal are told apart by the other 8.
            if rows == 1000 {
                for index in 500..<600 {
                    firsts[index] = KeyDigest(high: 0x3A00_0000_0000_1000, low: UInt64(index) << 8)
                }
            }
            func search(_ probe: KeyDigest, _ bytes: [UInt8]) -> Int {
                bytes.withUnsafeBytes { IndexTable.rowsAtMost(probe, in: $0, rows: rows, rowSize: 24) }
            }
            let bytes = fence(firsts)
            for probe in probes(firsts) {
                let counted = firsts.filter { ($0.high, $0.low) <= (probe.high, probe.low) }.count
                #expect(search(probe, bytes) == counted)
            }
            // Rows out of order: any answer within bounds.
            let shuffled = fence(firsts.shuffled(using: &generator))
            for probe in probes(firsts) {
                #expect((0...rows).contains(search(probe, shuffled)))
            }
        }
    }

    @Test("a forged or damaged table answers nothing wrong and leaves every other bucket alone")
    func forgedTableStaysInItsBucket() throws {
        let keys = try (0..<200).map { try key("f\($0)") }
        for (seed, key) in keys.enumerated() { try store(key, seed: seed) }
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let target = Buckets.index(of: keys[0].digest)
        let inTarget = keys.filter { Buckets.index(of: $0.digest) == target }
        let others = keys.filter { Buckets.index(of: $0.digest) != target }
        var bytes = try bucketBytes(target)
        let table = try #require(bytes.withUnsafeBytes { IndexTable(file: $0) })
        let original = bytes

        func check(_ label: Comment) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: bucketPath(target)))
            let reader = try reader()
            for key in others { #expect(reader.entry(for: key)?.url == key.redacted, label) }
            for key in inTarget {
                if let entry = reader.entry(for: key) { #expect(entry.url == key.redacted, label) }
            }
        }
        // Each fence row points at the next block: lookups read blocks without their line.
        if table.fenceCount > 1 {
            let offsets = (0..<table.fenceCount).map { IndexTable.headerSize + $0 * table.layout.rowSize + 16 }
            let rotated = offsets.map { Array(original[$0..<($0 + 8)]) }
            for (index, at) in offsets.enumerated() {
                bytes.replaceSubrange(at..<(at + 8), with: rotated[(index + 1) % rotated.count])
            }
            try check("fence rows pointing at other blocks")
        }
        // A row count far past the file, an end past the file, rows out of order, garbage.
        bytes = original
        withUnsafeBytes(of: Int64(1 << 40).bigEndian) { bytes.replaceSubrange(16..<24, with: $0) }
        try check("a row count past the file")
        bytes = original
        withUnsafeBytes(of: Int64(bytes.count + 1).bigEndian) { bytes.replaceSubrange(24..<32, with: $0) }
        try check("an end past the file")
        bytes = original
        bytes.replaceSubrange(
            IndexTable.headerSize..<table.linesStart,
            with: (IndexTable.headerSize..<table.linesStart).map { UInt8(truncatingIfNeeded: $0 &* 131) })
        try check("a garbage fence")
        bytes = Array(original.prefix(IndexTable.headerSize + 5))
        try check("a table cut short")
    }

    @Test("a tail past its limit is folded into a table by the run that grew it, with no clean")
    func runCompactsLargeTail() throws {
        let bucket = 0x17
        let long = String(repeating: "y", count: 1500)
        let keys = try keys(120, inBucket: bucket, prefix: "tail-\(long)-")
        for (seed, key) in keys.enumerated() { try store(key, seed: seed % 50) }
        let bytes = try bucketBytes(bucket)
        let table = try #require(bytes.withUnsafeBytes { IndexTable(file: $0) })
        #expect(table.count >= 60 && bytes.count - table.end <= IndexBucket.tailLimit)
        let reader = try reader()
        for key in keys { #expect(reader.entry(for: key)?.url == key.redacted) }
    }

    @Test("a read-only cache (--offline) serves its entries and writes no use, in a table or in a log")
    func readOnlyWritesNoUse() throws {
        let keys = try (0..<40).map { try store(key("ro\($0)"), seed: $0) }
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let logged = try (0..<10).map { try store(key("ro-log\($0)"), seed: 100 + $0) }
        let index = cache.directory + "/index"
        func snapshot() throws -> [String: Data] {
            try Dictionary(
                uniqueKeysWithValues: FileManager.default.contentsOfDirectory(atPath: index).map {
                    ($0, try Data(contentsOf: URL(fileURLWithPath: index + "/" + $0)))
                })
        }
        let before = try snapshot()
        clock.advance(by: .seconds(3600))
        let readOnly = try DiskCache(directory: cache.directory, now: clock.read, readOnly: true)
        let offline = ServePolicy(freshness: Freshness(maxAge: .seconds(60)), isOffline: true)
        for key in keys + logged {
            guard case .fresh = readOnly.lookup(key, serving: offline, now: clock.now) else {
                Issue.record("not served: \(key.redacted)")
                continue
            }
        }
        readOnly.flushUses()
        #expect(try snapshot() == before)
        // A writable cache records the same first uses.
        let writer = try reader()
        for key in keys + logged { _ = writer.lookup(key, serving: offline, now: clock.now) }
        writer.flushUses()
        #expect(try snapshot() != before)
    }

    @Test("a process that reads a bucket with a long log compacts it; a read-only one leaves it")
    func readerCompactsLongLog() throws {
        let bucket = 0x23
        let real = try keys(3, inBucket: bucket)
        for (seed, key) in real.enumerated() { try store(key, seed: seed) }
        // Put lines of another writer (a format-2 build, say) past the tail limit, no table.
        let template = try #require(cache.entry(for: real[0]))
        try append(fillerLines(500, inBucket: bucket, like: template, padding: 300), toBucket: bucket)
        let before = try bucketBytes(bucket)
        #expect(before.count > IndexBucket.tailLimit && !before.starts(with: IndexTable.magic))

        let readOnly = try DiskCache(directory: cache.directory, now: clock.read, readOnly: true)
        #expect(real.allSatisfy { readOnly.entry(for: $0)?.url == $0.redacted })
        #expect(try bucketBytes(bucket) == before)

        let writer = try reader()
        #expect(writer.entry(for: real[1])?.url == real[1].redacted)
        let after = try bucketBytes(bucket)
        let table = try #require(after.withUnsafeBytes { IndexTable(file: $0) })
        #expect(table.count == 503 && table.end == after.count)
        #expect(real.allSatisfy { writer.entry(for: $0)?.url == $0.redacted })
        let full = try fullParse(bucket)
        #expect(full.count == 503 && real.allSatisfy { full[$0.digest] == writer.entry(for: $0) })
    }

    @Test("a use of a table entry is written in its slot: the file does not grow, and readers and compaction see it")
    func usesInPlace() throws {
        let keys = try (0..<40).map { try store(key("u\($0)"), seed: $0) }
        _ = try cache.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let buckets = Set(keys.map { Buckets.index(of: $0.digest) })
        let sizes = try buckets.map { try bucketBytes($0).count }
        clock.advance(by: .seconds(100))
        let user = try reader()
        for key in keys { user.touch(key) }
        user.flushUses()
        #expect(try buckets.map { try bucketBytes($0).count } == sizes)
        let after = try reader()
        #expect(keys.allSatisfy { after.entry(for: $0)?.accessedAt == clock.now })
        // A new entry in each bucket, then clean: the tables are rewritten with the uses.
        var index = 0
        var added: [URLKey] = []
        for bucket in buckets {
            let extra = try self.keys(1, inBucket: bucket, prefix: "extra\(index)-")[0]
            index += 1
            added.append(try store(extra, seed: 100 + index, in: after))
        }
        _ = try after.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let compacted = try reader()
        #expect(keys.allSatisfy { compacted.entry(for: $0)?.accessedAt == clock.now })
        #expect(added.allSatisfy { compacted.entry(for: $0) != nil })
        for bucket in buckets {
            #expect(try bucketBytes(bucket).withUnsafeBytes { IndexTable(file: $0)?.end } == bucketBytes(bucket).count)
        }
    }

    @Test("a format-2 or format-3 cache is read as it is, converted by the first writer", arguments: [2, 3])
    func previousFormatConverted(version: Int) throws {
        let keys = try (0..<20).map { try store(key("old\($0)"), seed: $0) }
        let formatFile = cache.directory + "/FORMAT"
        // Those formats had no content files: their entries share nothing.
        try FileManager.default.removeItem(atPath: cache.directory + "/content")
        try "sdfetch cache format \(version)\nsee README.md, \"Cache format\", of sdfetch\n".write(
            toFile: formatFile, atomically: true, encoding: .utf8)
        // Read-only opens (stats, --offline) read it and change nothing.
        let stats = try DiskCache.stats(directory: cache.directory)
        #expect(stats.entries == 20)
        let readOnly = try DiskCache(directory: cache.directory, now: clock.read, readOnly: true)
        #expect(keys.allSatisfy { readOnly.entry(for: $0) != nil })
        #expect(try String(contentsOfFile: formatFile, encoding: .utf8).hasPrefix("sdfetch cache format \(version)\n"))
        // A writer names it format 4; clean writes the tables.
        let writer = try reader()
        #expect(try String(contentsOfFile: formatFile, encoding: .utf8).hasPrefix("sdfetch cache format 4\n"))
        _ = try writer.clean(maxAge: .seconds(86400), maxSize: nil, dryRun: false)
        let after = try reader()
        #expect(keys.allSatisfy { after.entry(for: $0)?.url == $0.redacted })
    }
}
