import FoundationEssentials
import Glibc

extension IndexTable {
    /// The table a compaction that keeps every entry writes for the bucket file
    /// `raw[..<end]` (whole lines only) whose head is `table`: the table's lines and the
    /// tail's latest put lines merged in digest order, each with its latest use: what
    /// ``IndexBucket/latestPuts(in:upTo:)`` and ``file(_:from:)`` make of the same file,
    /// except that a table line damaged since its table was written is kept while it still
    /// has a line's shape (lookups skip it, as they do now, and `clean` drops it).
    ///
    /// Why a merge: the table is sorted already, so its lines are copied as they are,
    /// without their check or a map of every entry sorted again; only the tail is parsed in
    /// full. A compaction then costs about a third of the CPU of the full parse, which lets
    /// ``IndexBucket/tailLimit`` keep short the tails that every lookup run maps
    /// (<doc:OnDiskFormat#Index-tables>).
    ///
    /// Nil when the table is not one a compaction wrote (lines out of digest order, a digest
    /// twice, a line that is not a put): the caller then parses the whole file.
    static func merged(_ raw: UnsafeRawBufferPointer, table: IndexTable, upTo end: Int) -> [UInt8]? {
        guard table.end <= end else { return nil }
        // The table's lines, in file order, which must be digest order.
        var kept: [(digest: KeyDigest, line: Range<Int>, usedAt: Int64)] = []
        kept.reserveCapacity(table.count)
        var sorted = true
        table.forEachLine(in: UnsafeRawBufferPointer(rebasing: raw[..<end])) { range, slotUse in
            // Copied without its check, which it passed when the table was written.
            guard let line = IndexRecord.peek(line: UnsafeRawBufferPointer(rebasing: raw[range])) else { return }
            let digest = line.digest
            guard line.isPut, kept.last.map({ ($0.digest.high, $0.digest.low) < (digest.high, digest.low) }) ?? true
            else {
                sorted = false
                return
            }
            kept.append((digest, range, max(line.usedAt, slotUse)))
        }
        guard sorted else { return nil }
        func tableIndex(of digest: KeyDigest) -> Int? {
            var low = 0
            var high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if (kept[middle].digest.high, kept[middle].digest.low) < (digest.high, digest.low) {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            return low < kept.count && kept[low].digest == digest ? low : nil
        }
        // The tail in order: a put replaces what came before it, a use moves the last use
        // of the put it follows.
        var puts: [KeyDigest: (line: Range<Int>, usedAt: Int64)] = [:]
        var replaced = Set<Int>()
        let region = UnsafeRawBufferPointer(rebasing: raw[table.end..<end])
        IndexBucket.forEachLine(in: region, upTo: region.count) { range in
            let start = table.end + range.lowerBound
            guard let line = IndexRecord.summary(line: UnsafeRawBufferPointer(rebasing: region[range])) else { return }
            if line.isPut {
                puts[line.digest] = (start..<(start + range.count), line.usedAt)
                if let index = tableIndex(of: line.digest) { replaced.insert(index) }
            } else if let put = puts[line.digest] {
                puts[line.digest]?.usedAt = max(put.usedAt, line.usedAt)
            } else if let index = tableIndex(of: line.digest), !replaced.contains(index) {
                kept[index].usedAt = max(kept[index].usedAt, line.usedAt)
            }
        }
        let added = puts.map { (digest: $0.key, line: $0.value.line, usedAt: $0.value.usedAt) }
            .sorted { ($0.digest.high, $0.digest.low) < ($1.digest.high, $1.digest.low) }
        var merged: [(digest: KeyDigest, line: Range<Int>, usedAt: Int64)] = []
        merged.reserveCapacity(kept.count + added.count)
        var next = 0
        for (index, item) in kept.enumerated() where !replaced.contains(index) {
            while next < added.count,
                (added[next].digest.high, added[next].digest.low) < (item.digest.high, item.digest.low)
            {
                merged.append(added[next])
                next += 1
            }
            merged.append(item)
        }
        merged += added[next...]
        return file(merged, from: raw)
    }
}
