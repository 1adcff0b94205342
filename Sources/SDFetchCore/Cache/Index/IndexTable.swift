import FoundationEssentials
import Glibc

/// The sorted table at the head of a compacted bucket file (<doc:OnDiskFormat#Index-tables>):
/// what lets a lookup read the one line it needs instead of the whole bucket, so a run's
/// cost follows its list, not the cache's size.
///
/// Layout, integers big-endian, in the layout compaction writes (``Layout/lines``):
///
///     0..<16          "sdfetch-table-4\n"
///     16..<24         N, the number of lines
///     24..<32         END, the offset where the table's lines end and the log tail begins
///     32..<32+72F     the fence: F = ceil(N / 16) rows, one per 16 lines: the digest of
///                     the row's first line (16 bytes), the offset of that line's slot (8),
///                     then for each of the 16 lines its length (2 bytes, 0 for none), then
///                     the last byte of its digest (1 each)
///     ..<END          the N lines in digest order, each its use slot (the last use, ns since
///                     1970, 8 bytes) followed by the line (`LF CHECK SP P ... LF`, see
///                     ``IndexRecord``)
///
/// A lookup searches the fence in memory (4.5 bytes per entry), picks the line whose
/// digest ends in the byte it looks for, and reads that slot and line, about 300 bytes, in
/// one `pread`. A use of a table entry is written into its slot in place (one 8-byte
/// `pwrite`), so warm runs do not grow the file: an entry's last use is the later of its
/// slot and its line's `used_ns`. The table is written whole under a temporary name and
/// renamed into place, so it is never torn; it is still untrusted: a fence row whose lines
/// fall outside the table is no row, a slot's time is bounded like any index time, and a
/// line must be framed by its newlines, parse with its check and carry the digest looked
/// up (``IndexBucket/entry(for:file:)``), so a forged or damaged table loses entries of
/// its own bucket and answers nothing wrong (a forged slot moves only an LRU time).
///
/// Tables written before (``Layout/blocks``, "sdfetch-table-3\n") are read as they are
/// until a compaction rewrites them: their fence rows have the digest and offset only, one
/// per block of 8 lines, and a block is 8 slots followed by its lines; a lookup reads the
/// whole block (about 2 KB).
struct IndexTable {
    enum Layout {
        /// Blocks of 8 slots and 8 lines ("sdfetch-table-3").
        case blocks
        /// Each line after its own slot, its length in the fence ("sdfetch-table-4").
        case lines

        var magic: [UInt8] { self == .blocks ? IndexTable.blockMagic : IndexTable.magic }
        /// Lines per fence row.
        var rowLines: Int { self == .blocks ? 8 : 16 }
        var rowSize: Int { self == .blocks ? 24 : 24 + 3 * rowLines }

        /// The bytes of the fence of a table of `lines` lines.
        func fenceSize(lines: Int) -> Int { IndexTable.fenceCount(lines, self) * rowSize }
    }

    static let magic: [UInt8] = Array("sdfetch-table-4\n".utf8)
    static let blockMagic: [UInt8] = Array("sdfetch-table-3\n".utf8)
    static let headerSize = 32
    /// The use slots at the head of every block of ``Layout/blocks``.
    static let blockSlotsSize = 8 * 8
    /// The largest read a lookup makes: a forged fence sizes no read past this.
    static let maxBlockBytes = 1 << 20

    let layout: Layout
    /// The number of lines.
    let count: Int
    /// Where the lines end and the log tail begins.
    let end: Int
    /// The fence rows, as read from the file.
    let fence: [UInt8]

    var fenceCount: Int { Self.fenceCount(count, layout) }
    var linesStart: Int { Self.headerSize + layout.fenceSize(lines: count) }

    static func fenceCount(_ lines: Int, _ layout: Layout) -> Int { (lines + layout.rowLines - 1) / layout.rowLines }

    /// The layout, line count and end a header claims, when `header` starts with a table's
    /// magic and the table fits in a file of `fileSize` bytes and its fence in
    /// ``SafeOpen/maxReadBytes`` (a sparse forged file has any size it likes); nil for a
    /// file without a table (a log only, as format 2 wrote) or a header out of bounds.
    static func header(_ header: UnsafeRawBufferPointer, fileSize: Int) -> (layout: Layout, count: Int, end: Int)? {
        guard header.count >= headerSize,
            let layout = [Layout.lines, .blocks].first(where: { header.prefix($0.magic.count).elementsEqual($0.magic) })
        else { return nil }
        let count = Int(integer(header, at: 16))
        let end = Int(integer(header, at: 24))
        let rowLines = layout.rowLines
        guard count >= 0, fileSize >= headerSize, count / rowLines <= (fileSize - headerSize) / layout.rowSize,
            count / rowLines <= SafeOpen.maxReadBytes / layout.rowSize,
            end <= fileSize, end >= headerSize + layout.fenceSize(lines: count)
        else { return nil }
        return (layout, count, end)
    }

    init(layout: Layout, count: Int, end: Int, fence: [UInt8]) {
        self.layout = layout
        self.count = count
        self.end = end
        self.fence = fence
    }

    /// The table at the head of `file` (a whole bucket file), or nil.
    init?(file: UnsafeRawBufferPointer) {
        guard let (layout, count, end) = Self.header(file, fileSize: file.count) else { return nil }
        let fenceEnd = Self.headerSize + layout.fenceSize(lines: count)
        self.init(layout: layout, count: count, end: end, fence: Array(file[Self.headerSize..<fenceEnd]))
    }

    // MARK: - Lookup

    /// The first value `body` gives for the byte ranges a lookup of `digest` reads, in
    /// order: the slot and line of each line of its fence row whose digest ends as
    /// `digest`'s does, or the one block of a ``Layout/blocks`` table. Nil when none gives
    /// one, `digest` sorts before every row or the fence points outside the lines (forged
    /// or damaged); rows out of order only make a search miss.
    func firstRead<T>(for digest: KeyDigest, _ body: (Range<Int>) -> T?) -> T? {
        fence.withUnsafeBytes { raw -> T? in
            let row = Self.rowsAtMost(digest, in: raw, rows: fenceCount, rowSize: layout.rowSize) - 1
            guard row >= 0 else { return nil }
            switch layout {
            case .blocks:
                return rowRange(row, in: raw).flatMap(body)
            case .lines:
                let tag = UInt8(truncatingIfNeeded: digest.low)
                var found: T?
                forEachSlotLine(ofRow: row, in: raw) { range, lineTag in
                    if found == nil, lineTag == tag { found = body(range) }
                }
                return found
            }
        }
    }

    /// Where `digest`'s put line is in `bytes`, the bytes of a range of ``firstRead(for:_:)``: the
    /// line's range (newlines excluded) and its slot's offset, both within `bytes`; nil
    /// when another line is there.
    func locate(_ digest: KeyDigest, in bytes: UnsafeRawBufferPointer) -> (line: Range<Int>, slot: Int)? {
        switch layout {
        case .blocks:
            return Self.line(of: digest, inBlock: bytes)
        case .lines:
            guard bytes.count > 10, bytes[8] == 0x0A, bytes[bytes.count - 1] == 0x0A else { return nil }
            let line = 9..<(bytes.count - 1)
            return Self.isPut(of: digest, UnsafeRawBufferPointer(rebasing: bytes[line])) ? (line, 0) : nil
        }
    }

    /// How many of the fence's first `rows` rows (of `rowSize` bytes) start at or before
    /// `digest`.
    ///
    /// Digests are SHA-256 bits, evenly spread, so the row is first guessed from where
    /// `digest` falls between the first and last rows, then bracketed by steps doubling
    /// away from the guess (1, 2, 4 rows: the answer is most often a row or two away, in
    /// the same or the next cache line), then found by binary search: a few neighbouring
    /// cache lines instead of a binary search's jumps across the whole fence, whose misses
    /// were a tenth of what a warm run over a large cache cost beyond one over a small cache.
    /// Rows out of order (a forged fence) yield some row, never an out-of-bounds one.
    static func rowsAtMost(_ digest: KeyDigest, in raw: UnsafeRawBufferPointer, rows: Int, rowSize: Int) -> Int {
        func first(_ row: Int) -> (UInt64, UInt64) {
            (
                UInt64(bitPattern: integer(raw, at: row * rowSize)),
                UInt64(bitPattern: integer(raw, at: row * rowSize + 8))
            )
        }
        let key = (digest.high, digest.low)
        // Rows before `low` start at or before the key, rows from `high` after it.
        var low = 0
        var high = rows
        let lowest = rows > 0 ? first(0).0 : 0
        let highest = rows > 0 ? first(rows - 1).0 : 0
        if rows >= 16, lowest < key.0, key.0 < highest {
            let share = Double(key.0 - lowest) / Double(highest - lowest)
            let guess = min(rows - 1, max(0, Int(share * Double(rows - 1))))
            var step = 1
            if first(guess) <= key {
                low = guess + 1
                while guess + step < high, first(guess + step) <= key {
                    low = guess + step + 1
                    step *= 2
                }
                high = min(high, guess + step)
            } else {
                high = guess
                while guess - step >= low, first(guess - step) > key {
                    high = guess - step
                    step *= 2
                }
                low = max(low, guess - step + 1)
            }
        }
        while low < high {
            let middle = (low + high) / 2
            if first(middle) <= key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The range of a ``Layout/blocks`` block, from its row's offset to the next row's
    /// (or ``end``); nil when that falls outside the lines.
    private func rowRange(_ row: Int, in raw: UnsafeRawBufferPointer) -> Range<Int>? {
        let rowSize = layout.rowSize
        let start = Int(Self.integer(raw, at: row * rowSize + 16))
        let stop = row + 1 < fenceCount ? Int(Self.integer(raw, at: (row + 1) * rowSize + 16)) : end
        guard start >= linesStart, start < stop, stop <= end, stop - start <= Self.maxBlockBytes else { return nil }
        return start..<stop
    }

    /// Calls `body` with the range of each slot and line of row `row` of a ``Layout/lines``
    /// table (slot, LF, line, LF) and the line's digest tag, stopping at the first length
    /// of 0 or a line past ``end``.
    private func forEachSlotLine(ofRow row: Int, in raw: UnsafeRawBufferPointer, _ body: (Range<Int>, UInt8) -> Void) {
        let base = row * layout.rowSize
        var position = Int(Self.integer(raw, at: base + 16))
        guard position >= linesStart else { return }
        for index in 0..<layout.rowLines {
            let length = Int(
                UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: base + 24 + 2 * index, as: UInt16.self)))
            guard length > 0, position + 10 + length <= end else { return }
            body(position..<(position + 10 + length), raw[base + 24 + 2 * layout.rowLines + index])
            position += 10 + length
        }
    }

    /// Whether `line` (newlines excluded) is a put line carrying `digest`, judged by its
    /// digest field without parsing the others (the caller parses it with its check).
    private static func isPut(of digest: KeyDigest, _ line: UnsafeRawBufferPointer) -> Bool {
        // CHECK (16) SP P TAB, then the digest.
        guard line.count > 51, line[17] == UInt8(ascii: "P") else { return false }
        // The digest's hex on the stack: an array here was a heap allocation per lookup.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { hex in
            digest.writeHex(digits: 32, into: hex)
            return memcmp(line.baseAddress! + 19, hex.baseAddress!, 32) == 0
        }
    }

    /// The range, within `block` (a whole ``Layout/blocks`` block, slots included), of the
    /// put line of `digest` (newlines excluded) and the offset of its use slot within the block.
    private static func line(
        of digest: KeyDigest, inBlock block: UnsafeRawBufferPointer
    ) -> (line: Range<Int>, slot: Int)? {
        var found: (Range<Int>, Int)?
        forEachLine(inBlock: block) { range, ordinal in
            guard found == nil, isPut(of: digest, UnsafeRawBufferPointer(rebasing: block[range])) else { return }
            found = (range, ordinal * 8)
        }
        return found
    }

    /// Calls `body` with the range of each line of a ``Layout/blocks`` block after its
    /// slots, and its ordinal (which slot is its); at most 8 lines.
    private static func forEachLine(inBlock block: UnsafeRawBufferPointer, _ body: (Range<Int>, Int) -> Void) {
        guard block.count > blockSlotsSize else { return }
        let lines = UnsafeRawBufferPointer(rebasing: block[blockSlotsSize...])
        var ordinal = 0
        IndexBucket.forEachLine(in: lines, upTo: lines.count) { range in
            guard ordinal < Layout.blocks.rowLines else { return }
            body((range.lowerBound + blockSlotsSize)..<(range.upperBound + blockSlotsSize), ordinal)
            ordinal += 1
        }
    }

    // MARK: - Whole files

    /// Calls `body` with the range of each of the table's lines in `file` (the whole
    /// bucket file; newlines excluded) and the time in its slot, in file order, skipping
    /// rows that point outside the lines.
    func forEachLine(in file: UnsafeRawBufferPointer, _ body: (Range<Int>, _ slotUse: Int64) -> Void) {
        let file = UnsafeRawBufferPointer(rebasing: file[..<min(file.count, end)])
        fence.withUnsafeBytes { raw in
            for row in 0..<fenceCount {
                switch layout {
                case .blocks:
                    guard let block = rowRange(row, in: raw), block.upperBound <= file.count else { continue }
                    let bytes = UnsafeRawBufferPointer(rebasing: file[block])
                    Self.forEachLine(inBlock: bytes) { range, ordinal in
                        body(
                            (block.lowerBound + range.lowerBound)..<(block.lowerBound + range.upperBound),
                            Self.slotTime(bytes, at: ordinal * 8))
                    }
                case .lines:
                    forEachSlotLine(ofRow: row, in: raw) { range, _ in
                        guard range.upperBound <= file.count, file[range.lowerBound + 8] == 0x0A,
                            file[range.upperBound - 1] == 0x0A
                        else { return }
                        body((range.lowerBound + 9)..<(range.upperBound - 1), Self.slotTime(file, at: range.lowerBound))
                    }
                }
            }
        }
    }

    /// The time in the slot at `offset` of `bytes`: 0 when it is out of bounds.
    static func slotTime(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        guard offset >= 0, offset + 8 <= bytes.count else { return 0 }
        let value = integer(bytes, at: offset)
        return (0...IndexRecord.maxTime).contains(value) ? value : 0
    }

    /// The 8 bytes a use slot holds for `usedAt`.
    static func slotBytes(_ usedAt: Int64) -> [UInt8] {
        withUnsafeBytes(of: usedAt.bigEndian, Array.init)
    }

    /// A whole table file holding `items` (ranges of put lines in `raw`, newlines excluded,
    /// each with its last use for its slot) sorted by digest. A line longer than a fence
    /// length can say is left out: no line sdfetch writes comes near it (URLs are at most
    /// 8 KiB, validators 1 KiB), so it was written by something else.
    static func file(
        _ items: [(digest: KeyDigest, line: Range<Int>, usedAt: Int64)], from raw: UnsafeRawBufferPointer
    )
        -> [UInt8]
    {
        let layout = Layout.lines
        let sorted = items.filter { $0.line.count <= Int(UInt16.max) }
            .sorted { ($0.digest.high, $0.digest.low) < ($1.digest.high, $1.digest.low) }
        let linesStart = headerSize + layout.fenceSize(lines: sorted.count)
        let end = linesStart + sorted.reduce(0) { $0 + 8 + $1.line.count + 2 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end)
        bytes += magic
        append(Int64(sorted.count), to: &bytes)
        append(Int64(end), to: &bytes)
        var offset = linesStart
        for start in stride(from: 0, to: sorted.count, by: layout.rowLines) {
            let row = sorted[start..<min(start + layout.rowLines, sorted.count)]
            append(Int64(bitPattern: row[start].digest.high), to: &bytes)
            append(Int64(bitPattern: row[start].digest.low), to: &bytes)
            append(Int64(offset), to: &bytes)
            for index in 0..<layout.rowLines {
                let length = index < row.count ? UInt16(row[start + index].line.count) : 0
                withUnsafeBytes(of: length.bigEndian) { bytes += $0 }
            }
            for index in 0..<layout.rowLines {
                bytes.append(index < row.count ? UInt8(truncatingIfNeeded: row[start + index].digest.low) : 0)
            }
            offset += row.reduce(0) { $0 + 8 + $1.line.count + 2 }
        }
        for item in sorted {
            append(item.usedAt, to: &bytes)
            bytes.append(0x0A)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[item.line]))
            bytes.append(0x0A)
        }
        return bytes
    }

    private static func append(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func integer(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        Int64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }
}
