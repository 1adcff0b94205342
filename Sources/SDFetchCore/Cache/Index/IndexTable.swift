import FoundationEssentials
import Glibc

/// The sorted table at the head of a compacted bucket file (formats 3 and 4, <doc:OnDiskFormat>):
/// what lets a lookup read the few lines it needs instead of the whole bucket, so a run's
/// cost follows its list, not the cache's size.
///
/// Layout, integers big-endian:
///
///     0..<16          "sdfetch-table-3\n"
///     16..<24         N, the number of lines
///     24..<32         END, the offset where the table's blocks end and the log tail begins
///     32..<32+24F     the fence: F = ceil(N / 8) rows, one per block: the digest of the
///                     block's first line (16 bytes), the block's offset (8)
///     ..<END          the F blocks, in digest order: 8 use slots (the last use of the
///                     block's lines in order, ns since 1970, 8 bytes each), then up to 8
///                     put lines sorted by digest (`LF CHECK SP P ... LF`, see ``IndexRecord``)
///
/// A lookup searches the fence in memory (3 bytes per entry), reads its block (about 2 KB)
/// and parses the line of its digest. A use of a table entry is written into its slot in
/// place (one aligned 8-byte `pwrite`), so warm runs do not grow the file: an entry's last
/// use is the later of its slot and its line's `used_ns`. The table is written whole under
/// a temporary name and renamed into place, so it is never torn; it is still untrusted: a
/// fence row whose block falls outside the table is no row, a slot's time is bounded like
/// any index time, and a line must parse with its check and carry the digest looked up
/// (``IndexBucket/entry(for:file:)``), so a forged or damaged table loses entries of its
/// own bucket and answers nothing wrong (a forged slot moves only an LRU time).
struct IndexTable {
    static let magic: [UInt8] = Array("sdfetch-table-3\n".utf8)
    static let headerSize = 32
    static let fenceRowSize = 24
    /// Lines per block: one read of about 2 KB per lookup, 3 bytes of fence per entry.
    static let blockLines = 8
    /// The use slots at the head of every block.
    static let slotsSize = blockLines * 8
    /// The largest block a lookup reads: a forged fence sizes no read past this.
    static let maxBlockBytes = 1 << 20

    /// The number of lines.
    let count: Int
    /// Where the lines end and the log tail begins.
    let end: Int
    /// The fence rows, as read from the file.
    let fence: [UInt8]

    var fenceCount: Int { Self.fenceCount(count) }
    var linesStart: Int { Self.headerSize + fenceCount * Self.fenceRowSize }

    static func fenceCount(_ lines: Int) -> Int { (lines + blockLines - 1) / blockLines }

    /// The line count and end a header claims, when `header` starts with the magic and
    /// the table fits in a file of `fileSize` bytes and its fence in ``SafeOpen/maxReadBytes``
    /// (a sparse forged file has any size it likes); nil for a file without a table (a log
    /// only, as format 2 wrote) or a header out of bounds.
    static func header(_ header: UnsafeRawBufferPointer, fileSize: Int) -> (count: Int, end: Int)? {
        guard header.count >= headerSize, header.prefix(magic.count).elementsEqual(magic) else { return nil }
        let count = Int(integer(header, at: 16))
        let end = Int(integer(header, at: 24))
        guard count >= 0, fileSize >= headerSize, count / blockLines <= (fileSize - headerSize) / fenceRowSize,
            count / blockLines <= SafeOpen.maxReadBytes / fenceRowSize,
            end <= fileSize, end >= headerSize + fenceCount(count) * fenceRowSize
        else { return nil }
        return (count, end)
    }

    init(count: Int, end: Int, fence: [UInt8]) {
        self.count = count
        self.end = end
        self.fence = fence
    }

    /// The table at the head of `file` (a whole bucket file), or nil.
    init?(file: UnsafeRawBufferPointer) {
        guard let (count, end) = Self.header(file, fileSize: file.count) else { return nil }
        let fenceEnd = Self.headerSize + Self.fenceCount(count) * Self.fenceRowSize
        self.init(count: count, end: end, fence: Array(file[Self.headerSize..<fenceEnd]))
    }

    /// The byte range of the block that holds `digest`'s line if the table has it. Nil when
    /// the fence points outside the lines (forged or damaged) or `digest` sorts before every
    /// block; rows out of order only make a search miss.
    func block(for digest: KeyDigest) -> Range<Int>? {
        fence.withUnsafeBytes { raw -> Range<Int>? in
            let row = Self.rowsAtMost(digest, in: raw, rows: fenceCount) - 1
            guard row >= 0 else { return nil }
            let start = Int(Self.integer(raw, at: row * Self.fenceRowSize + 16))
            let stop = row + 1 < fenceCount ? Int(Self.integer(raw, at: (row + 1) * Self.fenceRowSize + 16)) : end
            guard start >= linesStart, start < stop, stop <= end, stop - start <= Self.maxBlockBytes else { return nil }
            return start..<stop
        }
    }

    /// How many of the fence's first `rows` rows start at or before `digest`.
    ///
    /// Digests are SHA-256 bits, evenly spread, so the row is first guessed from where
    /// `digest` falls between the first and last rows, then bracketed by steps doubling
    /// away from the guess, then found by binary search: a few neighbouring cache lines
    /// instead of a binary search's jumps across the whole fence, whose misses were a
    /// tenth of what a warm run over a large cache cost beyond one over a small cache.
    /// Rows out of order (a forged fence) yield some row, never an out-of-bounds one.
    static func rowsAtMost(_ digest: KeyDigest, in raw: UnsafeRawBufferPointer, rows: Int) -> Int {
        func first(_ row: Int) -> (UInt64, UInt64) {
            (
                UInt64(bitPattern: integer(raw, at: row * fenceRowSize)),
                UInt64(bitPattern: integer(raw, at: row * fenceRowSize + 8))
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
            var step = 4
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

    /// The range, within `block` (a whole block, slots included), of the put line of
    /// `digest` (newlines excluded) and the offset of its use slot within the block, found
    /// by its digest field without parsing the others.
    static func line(of digest: KeyDigest, in block: UnsafeRawBufferPointer) -> (line: Range<Int>, slot: Int)? {
        // The digest's hex on the stack: an array here was a heap allocation per lookup.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { hex in
            digest.writeHex(digits: 32, into: hex)
            var found: (Range<Int>, Int)?
            forEachLine(inBlock: block) { range, ordinal in
                // CHECK (16) SP P TAB, then the digest.
                guard found == nil, range.count > 51, block[range.lowerBound + 17] == UInt8(ascii: "P"),
                    memcmp(block.baseAddress! + range.lowerBound + 19, hex.baseAddress!, 32) == 0
                else { return }
                found = (range, ordinal * 8)
            }
            return found
        }
    }

    /// Calls `body` with the range of each line of `block` after its slots, and its ordinal
    /// (which slot is its); at most ``blockLines`` lines.
    static func forEachLine(inBlock block: UnsafeRawBufferPointer, _ body: (Range<Int>, Int) -> Void) {
        guard block.count > slotsSize else { return }
        let lines = UnsafeRawBufferPointer(rebasing: block[slotsSize...])
        var ordinal = 0
        IndexBucket.forEachLine(in: lines, upTo: lines.count) { range in
            guard ordinal < blockLines else { return }
            body((range.lowerBound + slotsSize)..<(range.upperBound + slotsSize), ordinal)
            ordinal += 1
        }
    }

    /// The time in the slot at `offset` of `block`: 0 when it is out of bounds.
    static func slotTime(_ block: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        guard offset >= 0, offset + 8 <= min(block.count, slotsSize) else { return 0 }
        let value = integer(block, at: offset)
        return (0...IndexRecord.maxTime).contains(value) ? value : 0
    }

    /// The 8 bytes a use slot holds for `usedAt`.
    static func slotBytes(_ usedAt: Int64) -> [UInt8] {
        withUnsafeBytes(of: usedAt.bigEndian, Array.init)
    }

    /// Every block's range, in file order, skipping rows that point outside the table.
    func blocks() -> [Range<Int>] {
        fence.withUnsafeBytes { raw in
            (0..<fenceCount).compactMap { row -> Range<Int>? in
                let start = Int(Self.integer(raw, at: row * Self.fenceRowSize + 16))
                let stop =
                    row + 1 < fenceCount ? Int(Self.integer(raw, at: (row + 1) * Self.fenceRowSize + 16)) : end
                guard start >= linesStart, start < stop, stop <= end, stop - start <= Self.maxBlockBytes else {
                    return nil
                }
                return start..<stop
            }
        }
    }

    /// A whole table file holding `items` (ranges of put lines in `raw`, newlines excluded,
    /// each with its last use for its slot) sorted by digest.
    static func file(_ items: [(digest: KeyDigest, line: Range<Int>, usedAt: Int64)], from raw: UnsafeRawBufferPointer)
        -> [UInt8]
    {
        let sorted = items.sorted { ($0.digest.high, $0.digest.low) < ($1.digest.high, $1.digest.low) }
        let blocks = fenceCount(sorted.count)
        let linesStart = headerSize + blocks * fenceRowSize
        let end = linesStart + blocks * slotsSize + sorted.reduce(0) { $0 + $1.line.count + 2 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end)
        bytes += magic
        append(Int64(sorted.count), to: &bytes)
        append(Int64(end), to: &bytes)
        var offset = linesStart
        for (index, item) in sorted.enumerated() {
            if index % blockLines == 0 {
                append(Int64(bitPattern: item.digest.high), to: &bytes)
                append(Int64(bitPattern: item.digest.low), to: &bytes)
                append(Int64(offset), to: &bytes)
                offset += slotsSize
            }
            offset += item.line.count + 2
        }
        for start in stride(from: 0, to: sorted.count, by: blockLines) {
            let block = sorted[start..<min(start + blockLines, sorted.count)]
            for slot in 0..<blockLines { append(slot < block.count ? block[start + slot].usedAt : 0, to: &bytes) }
            for item in block {
                bytes.append(0x0A)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[item.line]))
                bytes.append(0x0A)
            }
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
