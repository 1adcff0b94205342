import FoundationEssentials
import Glibc

/// One bucket's counters, `usage/ab` (<doc:OnDiskFormat#Counters-and-trimming>): its live
/// entries, their bytes (each entry's file and index line), their oldest last use and the
/// span of their stored times, as of `length` bytes of the index file `inode`. A summary
/// of the bucket files, never the only copy of anything: counters that do not match their
/// index file are recounted from it.
struct BucketUsage: Sendable, Equatable {
    var inode: UInt64 = 0
    var length: Int64 = 0
    var entries = 0
    var bytes: Int64 = 0
    /// The earliest last use of the bucket's entries (ns since 1970); 0 when it has none.
    var oldest: Int64 = 0
    /// At most the earliest and at least the latest stored time of the entries (ns since
    /// 1970; 0 when none): replacements only ever widen the span, so `clean` may trust it
    /// to say that nothing in the bucket has expired.
    var storedFrom: Int64 = 0
    var storedTo: Int64 = 0

    static let magic = "sdfetch-usage 2"
    static let folderName = "usage"

    /// Whether these counters account for exactly the index file as it is now (`state`;
    /// nil when the bucket has no index file, which only all-zero counters match: a bucket
    /// with no index holds nothing, whatever a forged `bytes` says).
    func isCurrent(for state: BucketFileState?) -> Bool {
        guard let state else { return length == 0 && entries == 0 && bytes == 0 }
        return state.inode == inode && state.size == length
    }

    /// Adds an entry's `bytes`, last use `usedAt` and stored time `storedAt`.
    mutating func add(bytes: Int64, usedAt: Int64, storedAt: Int64) {
        entries += 1
        self.bytes += bytes
        oldest = oldest == 0 ? usedAt : min(oldest, usedAt)
        widen(storedAt: storedAt)
    }

    /// Takes `storedAt` into the span of stored times.
    mutating func widen(storedAt: Int64) {
        guard storedAt > 0 else { return }
        storedFrom = storedFrom == 0 ? storedAt : min(storedFrom, storedAt)
        storedTo = max(storedTo, storedAt)
    }

    /// The counters file. The inode is written as the signed number its bits make, as it is
    /// read: an inode past `Int64.max` (overlayfs sets high bits) must read back as written
    /// (CacheCountersFuzzer found it did not).
    var fileBytes: [UInt8] {
        LineRecord.encode(
            magic: Self.magic,
            [Int64(bitPattern: inode), length, Int64(entries), bytes, oldest, storedFrom, storedTo].map { String($0) })
    }

    /// Parses a counters file; nil for anything malformed or out of bounds (a forged file
    /// never sizes anything: at worst it moves a trim, and only until its index changes).
    init?(fileBytes bytes: UnsafeRawBufferPointer) {
        guard let fields = LineRecord.decode(magic: Self.magic, count: 7, from: bytes) else { return nil }
        let values = fields.map { LineRecord.integer(bytes, $0) }
        guard let inode = values[0], let length = values[1], let entries = values[2], let total = values[3],
            let oldest = values[4], let storedFrom = values[5], let storedTo = values[6], length >= 0, entries >= 0,
            entries <= 1 << 32, total >= 0, total <= Self.maxBytes, oldest >= 0, storedFrom >= 0,
            storedTo >= storedFrom, Self.isPlausible(bytes: total, entries: entries, length: length)
        else { return nil }
        self.init(inode: UInt64(bitPattern: inode), length: length, entries: Int(entries), bytes: total, oldest: oldest)
        self.storedFrom = storedFrom
        self.storedTo = storedTo
    }

    /// Most bytes one bucket's counters may claim, 8 PiB: the trim sums all 256 buckets, and
    /// that sum stays under a quarter of `Int64.max` (at the earlier bound, 2^59 bytes, 256
    /// forged files overflowed it: CacheCountersFuzzer's seed `forged-every-bucket`).
    static let maxBytes = Int64.max / Int64(Buckets.count) / 4

    /// Whether `bytes` can be what `entries` entries of an index file of `length` bytes
    /// hold: each entry's file at most ``IndexRecord/maxEntryBytes`` (what a record may
    /// claim), and their index lines within the file. No entries, no bytes.
    static func isPlausible(bytes: Int64, entries: Int64, length: Int64) -> Bool {
        guard entries > 0 else { return bytes == 0 }
        let (files, overflow) = entries.multipliedReportingOverflow(by: IndexRecord.maxEntryBytes)
        let (limit, past) = files.addingReportingOverflow(length)
        return overflow || past || bytes <= limit
    }

    init(inode: UInt64 = 0, length: Int64 = 0, entries: Int = 0, bytes: Int64 = 0, oldest: Int64 = 0) {
        self.inode = inode
        self.length = length
        self.entries = entries
        self.bytes = bytes
        self.oldest = oldest
    }

    /// Bucket `bucket`'s counters in the `usage/` folder `folder`, or nil.
    static func read(_ bucket: Int, in folder: Int32) -> BucketUsage? {
        guard folder >= 0 else { return nil }
        return LineRecord.read(Buckets.name(bucket), relativeTo: folder) { bytes, _ in BucketUsage(fileBytes: bytes) }
    }

    /// Writes these counters as bucket `bucket`'s, atomically (a temporary name in the same
    /// folder, renamed). Best effort: counters that are not written are recounted later.
    func write(_ bucket: Int, in folder: Int32) {
        guard folder >= 0 else { return }
        let temporary = FileIO.temporaryName(prefix: ".\(Buckets.name(bucket))-")
        let fd = SafeOpen.file(temporary, in: folder, flags: O_WRONLY | O_CREAT | O_EXCL)
        guard fd >= 0 else { return }
        let written = FileIO.writeAll(fileBytes, to: fd)
        close(fd)
        if !written || renameat(folder, temporary, folder, Buckets.name(bucket)) != 0 { unlinkat(folder, temporary, 0) }
    }
}
