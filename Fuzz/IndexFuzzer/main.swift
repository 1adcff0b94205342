import Glibc

@testable import SDFetchCore

/// libFuzzer entry point over an index bucket file (<doc:OnDiskFormat>): the table's
/// header, fence and lines (either layout) and the log tail, read every way the commands read them (the
/// whole-file reads of `clean`, `verify`, `stats` and `merge`, and the lookups of a run,
/// from a small file kept whole and from a large one read block by block).
///
/// The first byte picks modes: bit 0 gives every line a matching check before parsing, so
/// mutations reach the fields behind it (whoever can write a bucket can write a check);
/// bit 1 pads the file past ``IndexBucket/wholeFileLimit`` so lookups take the large-file
/// path (header, fence and one line or block per lookup by `pread`); bit 2 holds the file open.
@_cdecl("LLVMFuzzerTestOneInput")
public func indexFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    var file = Array(input.rest)
    if input.mode & 1 != 0 { file = withValidChecks(file) }
    if input.mode & 2 != 0 { file += [UInt8](repeating: 0x0A, count: IndexBucket.wholeFileLimit + 1) }
    var digests: [KeyDigest] = []
    file.withUnsafeBytes { raw in
        let end = (IndexRecord.lastOffset(of: 0x0A, in: raw) ?? -1) + 1
        let entries = IndexBucket.entries(in: raw, upTo: end)
        _ = IndexBucket.latestPuts(in: raw, upTo: end)
        IndexBucket.forEachLine(in: raw, upTo: raw.count) { range in
            let line = UnsafeRawBufferPointer(rebasing: raw[range])
            if let record = IndexRecord(line: line) { digests.append(record.digest) }
            _ = IndexRecord.summary(line: line)
        }
        digests += entries.keys
        if let table = IndexTable(file: raw) {
            digests += table.fence.withUnsafeBytes { fence in
                stride(from: 0, to: fence.count - 15, by: table.layout.rowSize).map { offset in
                    KeyDigest(
                        high: UInt64(bigEndian: fence.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                        low: UInt64(bigEndian: fence.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                }
            }
            table.forEachLine(in: raw) { line, _ in
                if let record = IndexRecord(line: UnsafeRawBufferPointer(rebasing: raw[line])) {
                    digests.append(record.digest)
                }
            }
            for digest in digests.prefix(16) {
                _ = table.firstRead(for: digest) { range -> Bool? in
                    guard range.upperBound <= raw.count else { return nil }
                    return table.locate(digest, in: UnsafeRawBufferPointer(rebasing: raw[range])) != nil ? true : nil
                }
            }
        }
    }
    let fd = FuzzInput.unnamedFile(file)
    defer { close(fd) }
    var bucket = IndexBucket()
    bucket.read(from: fd, holding: input.mode & 4 != 0)
    for digest in (digests + bucket.tail.keys).prefix(64) {
        _ = bucket.needsFile(for: digest)
        _ = bucket.entry(for: digest, file: fd)
        _ = bucket.slotOffset(for: digest, file: fd)
    }
    return 0
}

/// `file` with the check of every line that has the place for one recomputed (FNV-1a-64
/// over the payload, 16 lower-case hex digits).
private func withValidChecks(_ file: [UInt8]) -> [UInt8] {
    var out = file
    var start = 0
    while start < out.count {
        let end = out[start...].firstIndex(of: 0x0A) ?? out.count
        if end - start > 17, out[start + 16] == 0x20 {
            let check = out[(start + 17)..<end].withUnsafeBytes { IndexRecord.checksum($0) }
            for index in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: check >> UInt64((15 - index) * 4)) & 0xF
                out[start + index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
        }
        start = end + 1
    }
    return out
}
