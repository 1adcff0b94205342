import FoundationEssentials

/// The sorted table at the head of a compacted bucket file (format 3, <doc:OnDiskFormat>):
/// what lets a lookup read the few lines it needs instead of the whole bucket, so a run's
/// cost follows its list, not the cache's size.
///
/// Layout, integers big-endian:
///
///     0..<16          "sdfetch-table-3\n"
///     16..<24         N, the number of lines
///     24..<32         END, the offset where the table's lines end and the log tail begins
///     32..<32+24F     the fence: F = ceil(N / 8) rows, one per block of 8 lines: the
///                     digest of the block's first line (16 bytes), the block's offset (8)
///     32+24F..<END    the N put lines sorted by digest, each an ordinary put line
///                     (`LF CHECK SP P ... LF`, see ``IndexRecord``), last use folded in
///
/// A lookup searches the fence in memory (3 bytes per entry), reads its block of 8 lines
/// (about 2 KB) and parses the line of its digest. The lines section is a valid log on its
/// own, so a full read parses it as it parses the tail. The table is written whole under a
/// temporary name and renamed into place, so it is never torn; it is still untrusted: a
/// fence row whose block falls outside the table is no row, and a line must parse with its
/// check and carry the digest looked up (``IndexBucket/entry(for:file:)``), so a forged or
/// damaged table loses entries of its own bucket and answers nothing wrong.
struct IndexTable {
    static let magic: [UInt8] = Array("sdfetch-table-3\n".utf8)
    static let headerSize = 32
    static let fenceRowSize = 24
    /// Lines per block: one read of about 2 KB per lookup, 3 bytes of fence per entry.
    static let blockLines = 8
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
    /// the table fits in a file of `fileSize` bytes; nil for a file without a table (a log
    /// only, as format 2 wrote) or a header out of bounds.
    static func header(_ header: UnsafeRawBufferPointer, fileSize: Int) -> (count: Int, end: Int)? {
        guard header.count >= headerSize, header.prefix(magic.count).elementsEqual(magic) else { return nil }
        let count = Int(integer(header, at: 16))
        let end = Int(integer(header, at: 24))
        guard count >= 0, fileSize >= headerSize, count / blockLines <= (fileSize - headerSize) / fenceRowSize,
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

    /// The byte range of the block that holds `digest`'s line if the table has it: found
    /// by binary search of the fence. Nil when the fence points outside the lines (forged
    /// or damaged) or `digest` sorts before every block; rows out of order only make a
    /// search miss.
    func block(for digest: KeyDigest) -> Range<Int>? {
        fence.withUnsafeBytes { raw -> Range<Int>? in
            func first(_ row: Int) -> (UInt64, UInt64) {
                (
                    UInt64(bitPattern: Self.integer(raw, at: row * Self.fenceRowSize)),
                    UInt64(bitPattern: Self.integer(raw, at: row * Self.fenceRowSize + 8))
                )
            }
            // The last row whose first digest is at most `digest`.
            var low = 0
            var high = fenceCount
            while low < high {
                let middle = (low + high) / 2
                if first(middle) <= (digest.high, digest.low) { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let row = low - 1
            let start = Int(Self.integer(raw, at: row * Self.fenceRowSize + 16))
            let stop = row + 1 < fenceCount ? Int(Self.integer(raw, at: (row + 1) * Self.fenceRowSize + 16)) : end
            guard start >= linesStart, start < stop, stop <= end, stop - start <= Self.maxBlockBytes else { return nil }
            return start..<stop
        }
    }

    /// The range, within `block`, of the put line of `digest` (newlines excluded), found by
    /// its digest field without parsing the others.
    static func line(of digest: KeyDigest, in block: UnsafeRawBufferPointer) -> Range<Int>? {
        var hex = [UInt8](repeating: 0, count: 32)
        hex.withUnsafeMutableBufferPointer { digest.writeHex(digits: 32, into: $0) }
        var found: Range<Int>?
        IndexBucket.forEachLine(in: block, upTo: block.count) { range in
            // CHECK (16) SP P TAB, then the digest.
            guard found == nil, range.count > 51, block[range.lowerBound + 17] == UInt8(ascii: "P"),
                block[(range.lowerBound + 19)..<(range.lowerBound + 51)].elementsEqual(hex)
            else { return }
            found = range
        }
        return found
    }

    /// A whole table file holding `lines` (put lines without their newlines) sorted by digest.
    static func file(_ items: [(digest: KeyDigest, line: [UInt8])]) -> [UInt8] {
        let sorted = items.sorted { ($0.digest.high, $0.digest.low) < ($1.digest.high, $1.digest.low) }
        let linesStart = headerSize + fenceCount(sorted.count) * fenceRowSize
        let end = linesStart + sorted.reduce(0) { $0 + $1.line.count + 2 }
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
            }
            offset += item.line.count + 2
        }
        for item in sorted {
            bytes.append(0x0A)
            bytes += item.line
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
