import FoundationEssentials
import Glibc

/// One bucket's index (`index/ab`) as this process knows it: the bucket file's sorted
/// table (``IndexTable``) and a map of its log tail, both pointing at lines in the file,
/// which are parsed only when a lookup asks for them.
///
/// Memory follows the run rather than the cache: a small bucket file (up to
/// ``wholeFileLimit``) is kept whole, one read; a larger one keeps only the table's fence
/// (3 bytes per entry) and reads one block of 8 lines per lookup. The tail, which
/// compaction keeps short (``tailLimit``), is mapped by digest: where its latest put line
/// is, its latest use.
///
/// Reading is incremental: ``read(from:holding:)`` parses only what was appended since the
/// last read, unless the file was replaced (compacted: a new inode), which starts over.
struct IndexBucket {
    /// Files up to this size are read whole and kept: one read serves every lookup (a
    /// cache of up to some 100,000 entries).
    static let wholeFileLimit = 128 << 10
    /// A tail past this size is folded into the table by the next compaction
    /// (``CacheIndex/compactIfLarge(_:)``): it bounds both a bucket's tail map, which every
    /// run that looks the bucket up reads, and the bytes a compaction rewrites per line it
    /// absorbs (<doc:OnDiskFormat#Index-tables>). At 64 KiB the tails of a cache filled by
    /// fetch runs averaged 36 KiB a bucket, and mapping them was a fifth of what a warm run
    /// over a million entries cost beyond one over ten thousand; compaction by merge
    /// (``IndexTable/merged(_:table:upTo:)``) pays for the shorter tails.
    static let tailLimit = 16 << 10
    /// `clean` compacts a bucket whose tail is more than this share of its file (a 32nd),
    /// even with nothing to remove: a run's lookups map the whole tail of every bucket they
    /// touch, so after `clean` they cost what the table's blocks cost.
    static let tidyTailShare: Int64 = 32

    /// The tail's knowledge of one digest.
    struct TailRef {
        /// The latest put line in the tail (its check's offset, and length), if any.
        var putOffset: Int = -1
        var putLength: Int = 0
        /// The latest use in the tail, or of the put line itself.
        var usedAt: Int64 = 0
    }

    private(set) var isLoaded = false
    private(set) var inode: UInt64 = 0
    /// The whole file, when it is small enough to keep.
    private var whole: [UInt8]?
    private(set) var table: IndexTable?
    private(set) var tail: [KeyDigest: TailRef] = [:]
    /// Bytes of the file parsed so far (whole lines only).
    private(set) var offset = 0
    /// The file's end as last seen (a read, or an append of this process).
    private(set) var fileEnd = 0
    /// Uses noted in this process and not yet appended (see ``CacheIndex/flushUses()``).
    private(set) var pendingUses: [KeyDigest: Int64] = [:]
    /// The open file lookups read lines from, when it is not kept whole and may be held.
    private var file: HeldFile?

    /// A bucket file kept whole (up to ``wholeFileLimit``) is read whole by every run that
    /// touches it, tail or no tail: its log is folded in only past this size. Compacting it
    /// at ``tailLimit`` made the runs that fill a cache drop and read again their kept files
    /// four times as often, and the churn fragmented the heap (a cold run of 100,000 URLs
    /// peaked at 83 MB instead of 70).
    static let wholeFileTailLimit = 64 << 10

    /// Whether the tail has grown past its limit: ``tailLimit``, or ``wholeFileTailLimit``
    /// while the file is small enough to keep whole.
    var isTailLarge: Bool {
        fileEnd - (table?.end ?? 0) > (fileEnd > Self.wholeFileLimit ? Self.tailLimit : Self.wholeFileTailLimit)
    }

    /// Whether looking up `digest` may read past the kept bytes: the caller then opens the
    /// file when this process holds none.
    func needsFile(for digest: KeyDigest) -> Bool {
        guard file == nil else { return false }
        guard let whole else { return true }
        return (tail[digest]?.putOffset ?? -1) + (tail[digest]?.putLength ?? 0) > whole.count
    }

    // MARK: - Lookup

    /// `digest`'s latest entry with every use known here folded in; nil when there is none
    /// or its line does not parse as `digest`'s put (damaged or forged). `fd` is the open
    /// bucket file when ``needsFile(for:)``, else -1.
    mutating func entry(for digest: KeyDigest, file fd: Int32 = -1) -> CacheEntry? {
        let ref = tail[digest]
        var entry: CacheEntry
        var usedAtInTable: Int64 = 0
        if let ref, ref.putOffset >= 0 {
            let line = ref.putOffset..<(ref.putOffset + ref.putLength)
            guard let found = read(line, fd, { Self.put(digest, $0) }) else {
                if !isTailChecked { foundBadLine = true }
                return nil
            }
            entry = found
        } else if let table {
            let found = table.firstRead(for: digest) { range in read(range, fd) { Self.put(digest, in: $0, table) } }
            guard let found else { return nil }
            (entry, usedAtInTable) = found
        } else {
            return nil
        }
        let usedAt = max(ref?.usedAt ?? 0, pendingUses[digest] ?? 0, usedAtInTable)
        if usedAt > FileTime.nanoseconds(entry.accessedAt) { entry.accessedAt = FileTime.date(nanoseconds: usedAt) }
        return entry
    }

    private static func put(_ digest: KeyDigest, _ line: UnsafeRawBufferPointer) -> CacheEntry? {
        guard case .put(let found, let entry) = IndexRecord(line: line), found == digest else { return nil }
        return entry
    }

    /// `digest`'s entry in bytes a table lookup read (``IndexTable/firstRead(for:_:)``), and the
    /// time in its use slot.
    private static func put(
        _ digest: KeyDigest, in bytes: UnsafeRawBufferPointer, _ table: IndexTable
    )
        -> (CacheEntry, Int64)?
    {
        guard let (line, slot) = table.locate(digest, in: bytes),
            let entry = put(digest, UnsafeRawBufferPointer(rebasing: bytes[line]))
        else { return nil }
        return (entry, IndexTable.slotTime(bytes, at: slot))
    }

    /// The file offset of `digest`'s use slot when its latest line is in the table (a use
    /// is then written in place); nil when it is in the tail or not found.
    mutating func slotOffset(for digest: KeyDigest, file fd: Int32) -> Int? {
        guard (tail[digest]?.putOffset ?? -1) < 0, let table else { return nil }
        return table.firstRead(for: digest) { range in
            read(range, fd) { table.locate(digest, in: $0).map { range.lowerBound + $0.slot } }
        }
    }

    /// Notes that this process wrote `usedAt` into the slot at `offset` of the file it read.
    mutating func wroteSlot(at offset: Int, _ usedAt: Int64) {
        guard var kept = whole, offset + 8 <= kept.count else { return }
        whole = nil
        kept.replaceSubrange(offset..<(offset + 8), with: IndexTable.slotBytes(usedAt))
        whole = kept
    }

    /// `body` over the file's bytes in `range`: from the kept bytes, else one `pread`, into
    /// ``scratch`` when the block is of a usual size.
    private mutating func read<T>(_ range: Range<Int>, _ fd: Int32, _ body: (UnsafeRawBufferPointer) -> T?) -> T? {
        if let whole, range.upperBound <= whole.count {
            return whole.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        }
        let source = file?.fd ?? fd
        guard source >= 0, range.count <= IndexTable.maxBlockBytes else { return nil }
        func read(into buffer: UnsafeMutableRawBufferPointer) -> T? {
            guard pread(source, buffer.baseAddress, range.count, off_t(range.lowerBound)) == range.count else {
                return nil
            }
            return body(UnsafeRawBufferPointer(rebasing: buffer[..<range.count]))
        }
        guard range.count > Self.stackLimit, range.count <= Self.scratchLimit else {
            return withUnsafeTemporaryAllocation(byteCount: range.count, alignment: 1, read(into:))
        }
        if scratch.count < range.count { scratch = [UInt8](repeating: 0, count: max(range.count, 4096)) }
        return scratch.withUnsafeMutableBytes(read(into:))
    }

    /// Reads up to this size (a slot and its line, about 300 bytes) go to the stack, whose
    /// cache lines are warm: a bucket's own buffer is cold by the time the run comes back
    /// to that bucket, and filling it missed the cache line by line.
    private static let stackLimit = 1024
    /// The buffer of larger table reads, kept with the bucket: a temporary allocation over
    /// 1 KB (a block of the layout before is about 2 KB, a long line can pass 1 KB) is a
    /// `malloc`, which per block read was about 7 % of what a warm run over a large cache
    /// cost beyond the same run over a small one.
    private var scratch: [UInt8] = []
    /// Blocks up to this size are read into ``scratch``; a larger one (long URLs, or a
    /// forged fence) into memory of its own, freed after the read.
    private static let scratchLimit = 16 << 10

    // MARK: - Writes of this process

    /// Notes `records`, which this process just appended to the file of inode `inode` as
    /// `bytes` (their lines, `lengths` each) ending at `end`: applied at once when that is
    /// the file this bucket was read from, else the bucket is read afresh on its next use.
    mutating func appended(_ records: [IndexRecord], lengths: [Int], bytes: [UInt8], inode: UInt64, end: Int) {
        guard isLoaded, inode == self.inode else { return invalidate() }
        // The kept bytes of a small file stay as read (growing them would double their
        // capacity): a put line past them is read from the file like a large file's.
        fileEnd = max(fileEnd, end)
        var lineStart = end - bytes.count
        for (record, length) in zip(records, lengths) {
            switch record {
            case .put(let digest, let entry):
                tail[digest] = TailRef(
                    putOffset: lineStart + 1, putLength: length - 2, usedAt: FileTime.nanoseconds(entry.accessedAt))
            case .use(let digest, let usedAt):
                // Kept for what is mapped already; a run of a million hits over a large
                // bucket does not map a use per entry (its uses are pending until written).
                guard whole != nil || tail[digest] != nil else { break }
                tail[digest, default: TailRef()].usedAt = max(tail[digest]?.usedAt ?? 0, usedAt)
            }
            lineStart += length
        }
    }

    /// Marks the bucket as read when it has no file yet.
    mutating func markEmpty() {
        isLoaded = true
    }

    /// Set once this process tried to compact the bucket since reading it: a busy lock is
    /// not asked again on every lookup.
    var triedCompaction = false

    /// Records a use in memory and queues it for writing.
    mutating func noteUse(_ digest: KeyDigest, at usedAt: Int64) {
        pendingUses[digest] = usedAt
    }

    /// Hands over the queued uses, emptying the queue.
    mutating func takePendingUses() -> [IndexRecord] {
        defer { pendingUses = [:] }
        return pendingUses.map { IndexRecord.use($0.key, usedAt: $0.value) }
    }

    /// Makes the next use read the file afresh (it was rewritten), keeping queued uses.
    mutating func invalidate() {
        let pending = pendingUses
        let checked = isTailChecked
        self = IndexBucket()
        pendingUses = pending
        isTailChecked = checked
    }

    /// Whether the log is mapped with each line's check: set once a line mapped without it
    /// failed its check when looked up (a torn or forged line), so that an earlier, whole
    /// line of the same entry is found again.
    var isTailChecked = false
    /// A line mapped unchecked failed its check on lookup: the caller maps the log again, checked.
    private(set) var foundBadLine = false

    // MARK: - Reading

    /// Reads what the bucket file open as `fd` gained since the last read (all of it when
    /// it is another file than last time, or small enough to keep whole). Torn or foreign
    /// lines are skipped. With `holding`, a large file stays open for the lookups' reads:
    /// the bucket then owns `fd` and returns true (the caller must not close it).
    @discardableResult
    mutating func read(from fd: Int32, holding: Bool) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let size = Int(info.st_size)
        if UInt64(info.st_ino) != inode || size <= Self.wholeFileLimit || whole != nil {
            invalidate()
            inode = UInt64(info.st_ino)
        }
        isLoaded = true
        fileEnd = max(fileEnd, size)
        if size <= Self.wholeFileLimit {
            guard let bytes = SafeOpen.readAll(fd, size: size) else { return false }
            bytes.withUnsafeBytes { raw in
                table = IndexTable(file: raw)
                parseTail(raw, from: table?.end ?? 0, base: 0)
            }
            whole = bytes
            return false
        }
        var adopted = false
        if offset == 0 {
            var header = [UInt8](repeating: 0, count: IndexTable.headerSize)
            let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            // A fence past the file's allocated blocks is a sparse forgery: never read.
            let allocated = info.st_blocks > 0 ? Int(info.st_blocks) * 512 : size
            if count == IndexTable.headerSize,
                let (layout, rows, end) = header.withUnsafeBytes({ IndexTable.header($0, fileSize: size) }),
                layout.fenceSize(lines: rows) <= allocated,
                let bytes = Self.read(fd, count: layout.fenceSize(lines: rows), at: IndexTable.headerSize)
            {
                table = IndexTable(layout: layout, count: rows, end: end, fence: bytes)
            }
            offset = table?.end ?? 0
            if holding {
                file = HeldFile(fd)
                adopted = true
            }
        }
        guard size > offset, let bytes = SafeOpen.readAll(fd, from: offset, size: size) else { return adopted }
        bytes.withUnsafeBytes { parseTail($0, from: 0, base: offset) }
        return adopted
    }

    /// Exactly `count` bytes at `offset`, read straight into the array (the fence of a
    /// large table); nil when the file is shorter or cannot be read.
    private static func read(_ fd: Int32, count: Int, at offset: Int) -> [UInt8]? {
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while initialized < count {
                let got = pread(fd, buffer.baseAddress! + initialized, count - initialized, off_t(offset + initialized))
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                initialized += got
            }
            complete = initialized == count
        }
        return complete ? bytes : nil
    }

    /// Maps the whole lines of `raw[start...]` (file offset `base` + index) into ``tail``.
    private mutating func parseTail(_ raw: UnsafeRawBufferPointer, from start: Int, base: Int) {
        guard start < raw.count, let last = IndexRecord.lastOffset(of: 0x0A, in: raw), last >= start else { return }
        let region = UnsafeRawBufferPointer(rebasing: raw[start...last])
        tail.reserveCapacity(tail.count + region.count / 150)
        // Mapped without each line's check (a third of the cost of a warm run over a large
        // cache was checking log lines it never looked up): a lookup checks the line it reads,
        // and one that fails has the log mapped again, checked (``isTailChecked``).
        let checks = isTailChecked
        Self.forEachLine(in: region, upTo: region.count) { range in
            let line = UnsafeRawBufferPointer(rebasing: region[range])
            let found: (digest: KeyDigest, isPut: Bool, usedAt: Int64)?
            if checks {
                found = IndexRecord.summary(line: line).map { ($0.digest, $0.isPut, $0.usedAt) }
            } else {
                found = IndexRecord.peek(line: line)
            }
            guard let found else { return }
            if found.isPut {
                tail[found.digest] = TailRef(
                    putOffset: base + start + range.lowerBound, putLength: range.count, usedAt: found.usedAt)
            } else {
                tail[found.digest, default: TailRef()].usedAt = max(tail[found.digest]?.usedAt ?? 0, found.usedAt)
            }
        }
        offset = base + last + 1
    }

    /// Calls `body` with the range of each non-empty line in `raw[..<end]` (newlines excluded).
    static func forEachLine(in raw: UnsafeRawBufferPointer, upTo end: Int, _ body: (Range<Int>) -> Void) {
        let raw = UnsafeRawBufferPointer(rebasing: raw[..<end])
        var start = 0
        while let newline = IndexRecord.offset(of: 0x0A, in: raw, from: start) {
            if newline > start { body(start..<newline) }
            start = newline + 1
        }
    }

    // MARK: - Whole-file reads (clean, verify, stats, merge)

    /// A digest's latest put line and its summary, with the last use folded in.
    struct LatestPut {
        /// The line's range in the file, newlines excluded.
        var line: Range<Int>
        var summary: IndexRecord.Summary
        /// A later use (a use line, or its table slot) moved `summary.usedAt` past what the
        /// put line says.
        var isUsedSince: Bool
    }

    /// The latest put line of each digest in a whole bucket file (`raw[..<end]`: whole
    /// lines only), table and tail, with later uses folded into its summary, and how many
    /// lines there were (damaged ones included), read as ``IndexRecord/Summary``s without
    /// decoding a string: what `clean`, the trim and compaction need. The same answers as
    /// the lookups give (``entry(for:file:)``).
    static func latestPuts(
        in raw: UnsafeRawBufferPointer, upTo end: Int
    )
        -> (puts: [KeyDigest: LatestPut], lineCount: Int, table: IndexTable?)
    {
        var puts: [KeyDigest: LatestPut] = [:]
        var lineCount = 0
        func take(_ range: Range<Int>, slotUse: Int64) {
            lineCount += 1
            guard let line = IndexRecord.summary(line: UnsafeRawBufferPointer(rebasing: raw[range])) else { return }
            if line.isPut {
                var put = LatestPut(line: range, summary: line, isUsedSince: false)
                if slotUse > line.usedAt {
                    put.summary.usedAt = slotUse
                    put.isUsedSince = true
                }
                puts[line.digest] = put
            } else if let put = puts[line.digest], line.usedAt > put.summary.usedAt {
                puts[line.digest]?.summary.usedAt = line.usedAt
                puts[line.digest]?.isUsedSince = true
            }
        }
        let file = UnsafeRawBufferPointer(rebasing: raw[..<end])
        let table = IndexTable(file: file)
        table?.forEachLine(in: file) { line, slotUse in take(line, slotUse: slotUse) }
        let start = min(table?.end ?? 0, end)
        let region = UnsafeRawBufferPointer(rebasing: raw[start..<end])
        forEachLine(in: region, upTo: region.count) { range in
            take((start + range.lowerBound)..<(start + range.upperBound), slotUse: 0)
        }
        return (puts, lineCount, table)
    }

    /// Every entry of a whole bucket file, decoded, with uses folded in.
    static func entries(in raw: UnsafeRawBufferPointer, upTo end: Int) -> [KeyDigest: CacheEntry] {
        var entries: [KeyDigest: CacheEntry] = [:]
        for (digest, put) in latestPuts(in: raw, upTo: end).puts {
            guard case .put(_, var entry) = IndexRecord(line: UnsafeRawBufferPointer(rebasing: raw[put.line])) else {
                continue
            }
            if put.summary.usedAt > FileTime.nanoseconds(entry.accessedAt) {
                entry.accessedAt = FileTime.date(nanoseconds: put.summary.usedAt)
            }
            entries[digest] = entry
        }
        return entries
    }
}

/// A descriptor closed when the last holder lets go.
final class HeldFile: Sendable {
    let fd: Int32

    init(_ fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }
}
