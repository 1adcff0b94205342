import FoundationEssentials
import Glibc

/// One bucket's index (`index/ab`) as read into memory: the latest entry per digest,
/// with uses folded in, and how far the file has been read.
///
/// Reading is incremental: ``read(from:)`` parses only what was appended since the last
/// read, unless the file was replaced (compacted: a new inode), which starts over.
struct IndexBucket {
    private(set) var entries: [KeyDigest: CacheEntry] = [:]
    /// Uses noted in this process and not yet appended (see ``CacheIndex/flushUses()``).
    private(set) var pendingUses: [KeyDigest: Int64] = [:]
    private(set) var isLoaded = false
    private(set) var inode: UInt64 = 0
    /// Bytes of the file parsed so far (whole lines only).
    private(set) var offset = 0
    /// Lines read, live, superseded or damaged: with ``entries`` the measure of garbage.
    private(set) var lineCount = 0

    mutating func apply(_ record: IndexRecord) {
        lineCount += 1
        switch record {
        case .put(let digest, let entry):
            entries[digest] = entry
        case .use(let digest, let usedAt):
            guard var entry = entries[digest] else { return }
            let date = FileTime.date(nanoseconds: usedAt)
            if date > entry.accessedAt {
                entry.accessedAt = date
                entries[digest] = entry
            }
        }
    }

    /// Records a use in memory and queues it for writing.
    mutating func noteUse(_ digest: KeyDigest, at usedAt: Int64) {
        pendingUses[digest] = usedAt
        apply(.use(digest, usedAt: usedAt))
        lineCount -= 1  // not a line of the file
    }

    /// Hands over the queued uses, emptying the queue.
    mutating func takePendingUses() -> [IndexRecord] {
        defer { pendingUses = [:] }
        return pendingUses.map { IndexRecord.use($0.key, usedAt: $0.value) }
    }

    /// Makes the next read start over from the file (it was rewritten), keeping queued uses.
    mutating func invalidate() {
        isLoaded = false
        inode = 0
    }

    /// Reads what the bucket file open as `fd` gained since the last read (all of it when
    /// it is a different file than last time). Torn or foreign lines are skipped.
    mutating func read(from fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        if UInt64(info.st_ino) != inode {
            let pending = pendingUses
            self = IndexBucket()
            pendingUses = pending
            inode = UInt64(info.st_ino)
        }
        isLoaded = true
        guard Int(info.st_size) > offset, let bytes = SafeOpen.readAll(fd, from: offset) else { return }
        // Only whole lines: a line still being written is read next time.
        guard let end = bytes.lastIndex(of: 0x0A) else { return }
        // About one entry per 150 bytes: sized once instead of regrown line by line.
        entries.reserveCapacity(entries.count + end / 150)
        bytes.withUnsafeBytes { raw in
            Self.forEachLine(in: raw, upTo: end + 1) { line in
                if let record = IndexRecord(line: UnsafeRawBufferPointer(rebasing: raw[line])) {
                    apply(record)
                } else {
                    lineCount += 1  // torn or foreign: garbage for compaction to drop
                }
            }
        }
        offset += end + 1
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

    /// A digest's latest put line and its summary, with the last use folded in.
    struct LatestPut {
        var line: Range<Int>
        var summary: IndexRecord.Summary
        /// A use line after the put moved `summary.usedAt` past what the put line says.
        var isUsedSince: Bool
    }

    /// The latest put line of each digest in `raw[..<end]` with later uses folded into its
    /// summary, and how many lines there were (damaged ones included), read as
    /// ``IndexRecord/Summary``s without decoding a string: what `clean`, the trim and
    /// compaction need.
    static func latestPuts(in raw: UnsafeRawBufferPointer, upTo end: Int)
        -> (puts: [KeyDigest: LatestPut], lineCount: Int)
    {
        var puts: [KeyDigest: LatestPut] = [:]
        var lineCount = 0
        forEachLine(in: raw, upTo: end) { range in
            lineCount += 1
            guard let line = IndexRecord.summary(line: UnsafeRawBufferPointer(rebasing: raw[range])) else { return }
            if line.isPut {
                puts[line.digest] = LatestPut(line: range, summary: line, isUsedSince: false)
            } else if let put = puts[line.digest], line.usedAt > put.summary.usedAt {
                puts[line.digest]?.summary.usedAt = line.usedAt
                puts[line.digest]?.isUsedSince = true
            }
        }
        return (puts, lineCount)
    }

    /// Marks the bucket as read when it has no file yet.
    mutating func markEmpty() {
        isLoaded = true
    }
}
