import FoundationEssentials
import Glibc
import Synchronization

/// The metadata of every entry: 256 index files under `index/`, one per bucket, each a
/// sorted table of the entries compacted so far followed by an append-only log tail
/// (see ``IndexTable``, ``IndexBucket`` and ``IndexRecord``).
///
/// Why buckets of lines rather than a file per entry: an entry stays one inode (its image
/// bytes), a warm hit needs no metadata read of its own, and plain files survive every way
/// CI systems save a directory (`tar`, `zip`, `cp -r`, `rsync -a`), which extended
/// attributes did not. Why a table: a lookup searches its bucket's fence and reads the one
/// block of lines that holds its own, so a run of 10,000 URLs over a cache of a million
/// entries reads what those URLs need, not the million lines.
///
/// ## Sharing with other processes
/// - Writers append whole lines with one `O_APPEND` write each, without a lock: the kernel
///   orders appends to one file, and the per-line check rejects anything torn.
/// - Compaction (``compact(_:keeping:)``: by `clean` and `verify`, and by any process whose
///   bucket's tail outgrew ``IndexBucket/tailLimit``) rewrites an index file as a table
///   under its bucket's lock and renames it into place, then copies over whatever was
///   appended to the old file meanwhile. An appender that finds, after its write, that the
///   name now holds another file writes its line again: a duplicate line is harmless, a
///   lost one is not.
/// - Each process reads a bucket once, then applies its own writes, and reads what others
///   appended only when a line it holds no longer matches its file (``DiskCache/entry(for:)``):
///   an entry another process stores during this run is fetched again rather than looked up.
///   A process holding a replaced file keeps reading that file, a consistent snapshot.
///
/// Thread-safe: each bucket sits behind its own `Mutex`.
final class CacheIndex: Sendable {
    let folder: DirectoryDescriptor
    /// The `locks/` folder, for the bucket locks compaction takes.
    let locks: DirectoryDescriptor
    /// The `usage/` folder of the buckets' counters (``BucketUsage``).
    let usage: DirectoryDescriptor
    private let slots: [Slot]
    /// A use is appended only when the last recorded one is older than this, so warm runs
    /// close together add nothing and the bucket grows by at most one line per entry per
    /// interval. The first use after a store is always appended (see ``noteUse(_:of:at:)``).
    let useInterval: Duration
    /// Whether large bucket files stay open for the lookups' reads (see ``BucketFolders``).
    let holdsFiles: Bool
    /// False for a read-only cache, which a lookup never writes: no compaction, no use.
    let compacts: Bool
    /// Uses queued per bucket before they are written: a run of a million hits holds a
    /// few thousand, not a million.
    static let pendingLimit = 256
    /// This process's changes to each bucket, for its counters (``BucketUsage``).
    let ledger = UsageLedger()
    /// Bucket files `clean` swept and is about to compact (see ``summaries(_:forCompaction:)``):
    /// one per maintenance thread at most.
    private let parsed = Mutex<[Int: ParsedFile]>([:])

    private final class Slot: Sendable {
        let bucket = Mutex(IndexBucket())
    }

    init(
        folder: DirectoryDescriptor, locks: DirectoryDescriptor, usage: DirectoryDescriptor = DirectoryDescriptor(-1),
        useInterval: Duration, compacts: Bool = true
    ) {
        self.folder = folder
        self.locks = locks
        self.usage = usage
        self.useInterval = useInterval
        self.compacts = compacts
        holdsFiles = BucketFolders.limitAllowsHolding
        slots = (0..<Buckets.count).map { _ in Slot() }
    }

    /// Runs `body` on bucket `index`'s index, reading the file first if this process has not.
    func withBucket<T, E: Error>(_ index: Int, _ body: (inout IndexBucket) throws(E) -> T) throws(E) -> T {
        try slots[index].bucket.withLock { (bucket) throws(E) -> T in
            if !bucket.isLoaded { load(index, into: &bucket) }
            return try body(&bucket)
        }
    }

    private func load(_ index: Int, into bucket: inout IndexBucket) {
        let fd = SafeOpen.reading(Buckets.name(index), in: folder.value)
        guard fd >= 0 else { return bucket.markEmpty() }
        // A large file the bucket keeps open for its lookups is the bucket's to close.
        if !bucket.read(from: fd, holding: holdsFiles) { close(fd) }
    }

    /// Runs `body` with bucket `index`'s index file open for reading; nil when there is none
    /// (or it is not a regular file).
    private func withFile<T>(_ index: Int, _ body: (Int32) -> T) -> T? {
        let fd = SafeOpen.reading(Buckets.name(index), in: folder.value)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return body(fd)
    }

    /// Which index file bucket `index` has and how long it is: every replacement of an
    /// entry file appends to its index under the bucket's lock, so an unchanged state under that
    /// lock means no entry file of the bucket was replaced since the state was taken.
    func fileState(_ index: Int) -> BucketFileState? {
        var info = stat()
        guard fstatat(folder.value, Buckets.name(index), &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return BucketFileState(inode: UInt64(info.st_ino), size: Int64(info.st_size))
    }

    /// ``fileState(_:)`` of bucket `index` and the bytes of its file past its table (the
    /// whole file when it has none): its log tail, where every line that no longer counts
    /// lies. Nil when there is no file.
    func tail(_ index: Int) -> (state: BucketFileState, bytes: Int)? {
        withFile(index) { fd -> (BucketFileState, Int)? in
            var info = stat()
            guard fstat(fd, &info) == 0 else { return nil }
            var header = [UInt8](repeating: 0, count: IndexTable.headerSize)
            let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            let table =
                count == IndexTable.headerSize
                ? header.withUnsafeBytes { IndexTable.header($0, fileSize: Int(info.st_size)) } : nil
            let state = BucketFileState(inode: UInt64(info.st_ino), size: Int64(info.st_size))
            return (state, Int(info.st_size) - (table?.end ?? 0))
        } ?? nil
    }

    /// Reads bucket `index`'s index ahead of its first use (``DiskCache/preloadIndex()``).
    /// The file is read outside the bucket's lock and installed only if nobody loaded it
    /// meanwhile: a lookup never waits for a preload thread preempted halfway through a file
    /// (on two cores the lookups and the preload threads outnumber the cores); at worst a
    /// bucket is read twice.
    func preload(_ index: Int) {
        guard !slots[index].bucket.withLock({ $0.isLoaded }) else { return }
        var loaded = IndexBucket()
        load(index, into: &loaded)
        slots[index].bucket.withLock { bucket in
            if !bucket.isLoaded && bucket.pendingUses.isEmpty { bucket = loaded }
        }
    }

    /// Reads what other processes appended to bucket `index` since this process last looked.
    func refresh(_ index: Int) {
        slots[index].bucket.withLock { bucket in load(index, into: &bucket) }
    }

    /// Bucket `index`'s whole file (at most ``SafeOpen/maxReadBytes``) and the end of its
    /// last whole line, read without keeping it, with the file's inode and that end: the
    /// part of the file the caller accounts for.
    private func wholeFile(_ index: Int) -> (bytes: [UInt8], end: Int, state: BucketFileState)? {
        let read =
            withFile(index) { fd -> ([UInt8], Int, UInt64)? in
                var info = stat()
                guard fstat(fd, &info) == 0, let (bytes, end) = Self.wholeLines(fd) else { return nil }
                return (bytes, end, UInt64(info.st_ino))
            } ?? nil
        guard let (bytes, end, inode) = read else { return nil }
        return (bytes, end, BucketFileState(inode: inode, size: Int64(end)))
    }

    /// The whole file open as `fd` (at most ``SafeOpen/maxReadBytes``) and the end of its
    /// last whole line.
    private static func wholeLines(_ fd: Int32) -> (bytes: [UInt8], end: Int)? {
        guard let bytes = SafeOpen.readAll(fd) else { return nil }
        return (bytes, (bytes.withUnsafeBytes { IndexRecord.lastOffset(of: 0x0A, in: $0) } ?? -1) + 1)
    }

    /// Bucket `index`'s entries as the file holds them now, decoded, read without keeping
    /// them, and the part of the file read (nil when there is none).
    func entries(_ index: Int) -> (entries: [KeyDigest: CacheEntry], state: BucketFileState?) {
        guard let (bytes, end, state) = wholeFile(index) else { return ([:], nil) }
        return (bytes.withUnsafeBytes { IndexBucket.entries(in: $0, upTo: end) }, state)
    }

    /// Bucket `index`'s index as ``IndexRecord/Summary``s, read without keeping it, the
    /// part of the file read (nil when there is none), and whether that is already a table
    /// of one line per entry and nothing else (a compaction would leave it as it is).
    /// With `forCompaction`, the file as read and parsed is kept for the bucket's next
    /// ``compact(_:keeping:)``, which then reads and parses it again only if it changed:
    /// `clean` sweeps, then compacts (call ``forgetParsed(_:)`` when it does not).
    func summaries(
        _ index: Int, forCompaction: Bool = false
    )
        -> (summaries: [KeyDigest: IndexRecord.Summary], state: BucketFileState?, isCompact: Bool)
    {
        guard let (bytes, end, state) = wholeFile(index) else { return ([:], nil, false) }
        let parsed = ParsedFile(bytes: bytes, end: end, inode: state.inode)
        let isCompact =
            parsed.table.map { $0.end == end && end == bytes.count && $0.count == parsed.lineCount } == true
            && parsed.puts.count == parsed.lineCount
        if forCompaction { self.parsed.withLock { $0[index] = parsed } }
        return (parsed.puts.mapValues(\.summary), state, isCompact)
    }

    /// Drops what ``summaries(_:forCompaction:)`` kept of bucket `index`.
    func forgetParsed(_ index: Int) {
        _ = parsed.withLock { $0.removeValue(forKey: index) }
    }

    /// A bucket file as read, with its latest put lines.
    private struct ParsedFile: Sendable {
        let bytes: [UInt8]
        /// The end of its last whole line.
        let end: Int
        let inode: UInt64
        let puts: [KeyDigest: IndexBucket.LatestPut]
        let lineCount: Int
        let table: IndexTable?

        init(bytes: [UInt8], end: Int, inode: UInt64) {
            self.bytes = bytes
            self.end = end
            self.inode = inode
            (puts, lineCount, table) = bytes.withUnsafeBytes { IndexBucket.latestPuts(in: $0, upTo: end) }
        }
    }

    /// Forgets bucket `index`'s index, so the next use reads it afresh (after a compaction).
    func forget(_ index: Int) {
        slots[index].bucket.withLock { $0.invalidate() }
    }

    /// `digest`'s entry with every known use folded in, or nil.
    func entry(for digest: KeyDigest) -> CacheEntry? {
        let index = Buckets.index(of: digest)
        let (found, isLarge) = withBucket(index) { bucket -> (CacheEntry?, Bool) in
            (lookUp(digest, in: &bucket, index), bucket.isTailLarge && !bucket.triedCompaction)
        }
        if isLarge { compactIfLarge(index) }
        return found
    }

    private func lookUp(_ digest: KeyDigest, in bucket: inout IndexBucket, _ index: Int) -> CacheEntry? {
        if let found = lookUpOnce(digest, in: &bucket, index) { return found }
        guard bucket.foundBadLine else { return nil }
        // A line mapped unchecked was torn or forged: map the log again, each line checked.
        bucket.invalidate()
        bucket.isTailChecked = true
        load(index, into: &bucket)
        return lookUpOnce(digest, in: &bucket, index)
    }

    private func lookUpOnce(_ digest: KeyDigest, in bucket: inout IndexBucket, _ index: Int) -> CacheEntry? {
        guard bucket.needsFile(for: digest) else { return bucket.entry(for: digest) }
        // A large file this process does not hold open: opened for this read, and read
        // afresh if it is no longer the file the bucket was read from.
        return withFile(index) { fd -> CacheEntry? in
            var info = stat()
            if fstat(fd, &info) == 0, UInt64(info.st_ino) != bucket.inode { bucket.read(from: fd, holding: false) }
            return bucket.entry(for: digest, file: fd)
        } ?? nil
    }

    // MARK: - Writing

    /// Appends `record` to its bucket file and applies it in memory.
    func append(_ record: IndexRecord) throws(FetchFailure) {
        let index = Buckets.index(of: record.digest)
        let line = record.line
        let isLarge = try withBucket(index) { (bucket: inout IndexBucket) throws(FetchFailure) -> Bool in
            guard let (inode, end) = Self.append(line, to: Buckets.name(index), in: folder.value) else {
                throw FetchFailure(.io, "cannot write the cache index: \(errnoText())")
            }
            ledger.appended(index, inode: inode, count: line.count)
            bucket.appended([record], lengths: [line.count], bytes: line, inode: inode, end: end)
            return bucket.isTailLarge && !bucket.triedCompaction
        }
        if isLarge { compactIfLarge(index) }
    }

    /// Notes a use of `digest`, whose entry is `entry` (as a lookup returned it), at
    /// `date`: it is written (``flushUses()``) when the last recorded use was at least
    /// ``useInterval`` before, or when the entry has not been used since it was stored.
    ///
    /// A store records its time as the access time too, so without the second rule a hit
    /// within ``useInterval`` of a store (a run repeated a minute later) left the entry
    /// looking as old as its store, and a trim removed the entries just used before those
    /// never used again.
    func noteUse(_ digest: KeyDigest, of entry: CacheEntry, at date: Date) {
        // A read-only cache (`--offline`) is read, never written, uses included.
        guard compacts, date > entry.accessedAt else { return }
        let isFirstUse = entry.accessedAt <= entry.storedAt
        guard isFirstUse || date.timeIntervalSince(entry.accessedAt) >= useInterval.timeInterval else { return }
        let index = Buckets.index(of: digest)
        let isLarge = withBucket(index) { bucket -> Bool in
            bucket.noteUse(digest, at: FileTime.nanoseconds(date))
            guard bucket.pendingUses.count >= Self.pendingLimit else { return false }
            writePendingUses(index, &bucket)
            return bucket.isTailLarge && !bucket.triedCompaction
        }
        if isLarge { compactIfLarge(index) }
    }

    /// Appends the noted uses, one write per bucket, and compacts the buckets whose tail
    /// outgrew ``IndexBucket/tailLimit``. Best effort: a use that cannot be written only
    /// makes its entry look older to the LRU.
    func flushUses() {
        for index in 0..<Buckets.count {
            let isLarge = slots[index].bucket.withLock { bucket -> Bool in
                guard !bucket.pendingUses.isEmpty else { return false }
                writePendingUses(index, &bucket)
                return bucket.isTailLarge && !bucket.triedCompaction
            }
            if isLarge { compactIfLarge(index) }
        }
    }

    /// Writes the bucket's pending uses: a table entry's into its slot in place, the rest
    /// (entries in the tail, or when the file changed) as use lines.
    private func writePendingUses(_ index: Int, _ bucket: inout IndexBucket) {
        var records = bucket.takePendingUses()
        if bucket.table != nil {
            let fd = SafeOpen.file(Buckets.name(index), in: folder.value, flags: O_RDWR)
            var info = stat()
            if fd >= 0, fstat(fd, &info) == 0, UInt64(info.st_ino) == bucket.inode {
                records = records.filter { record in
                    guard case .use(let digest, let usedAt) = record,
                        let slot = bucket.slotOffset(for: digest, file: fd),
                        IndexTable.slotBytes(usedAt).withUnsafeBytes({ pwrite(fd, $0.baseAddress, 8, off_t(slot)) })
                            == 8
                    else { return true }
                    bucket.wroteSlot(at: slot, usedAt)
                    return false
                }
            }
            if fd >= 0 { close(fd) }
        }
        guard !records.isEmpty else { return }
        let lines = records.map(\.line)
        let bytes = Array(lines.joined())
        guard let (inode, end) = Self.append(bytes, to: Buckets.name(index), in: folder.value) else { return }
        ledger.appended(index, inode: inode, count: bytes.count)
        if bucket.isLoaded {
            bucket.appended(records, lengths: lines.map(\.count), bytes: bytes, inode: inode, end: end)
        }
    }

    /// The append protocol (see the type's documentation): the inode of the file that has
    /// the bucket's name and holds `bytes`, and the offset where they end; nil on failure.
    static func append(_ bytes: [UInt8], to name: String, in folder: Int32) -> (inode: UInt64, end: Int)? {
        for _ in 0..<8 {
            let fd = SafeOpen.file(name, in: folder, flags: O_WRONLY | O_APPEND | O_CREAT)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var written = stat()
            var named = stat()
            guard FileIO.writeAll(bytes, to: fd), fstat(fd, &written) == 0 else { return nil }
            let end = lseek(fd, 0, SEEK_CUR)
            if fstatat(folder, name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_ino == written.st_ino {
                return (UInt64(written.st_ino), Int(end))
            }
        }
        return nil
    }

    // MARK: - Compaction

    /// Folds bucket `index`'s tail into its table when the tail outgrew
    /// ``IndexBucket/tailLimit`` and the bucket's lock is free (a busy lock belongs to
    /// `clean` or another compaction, which does the same). Keeps every entry.
    func compactIfLarge(_ index: Int) {
        slots[index].bucket.withLock { $0.triedCompaction = true }
        guard compacts else { return }
        let lock = DirectoryLock(folder: locks.value, name: Buckets.name(index))
        _ = lock.withLockIfFree {
            guard let state = fileState(index), state.size > Int64(IndexBucket.tailLimit) else { return }
            // Reported first, so that counters this process kept current carry over to the table.
            if let pending = ledger.take(index) { report(index, pending) }
            compactKeepingAll(index)
        }
    }

    /// ``compact(_:keeping:)`` keeping every entry: the tail merged into the table
    /// (``IndexTable/merged(_:table:upTo:)``), unless the file has no table a compaction
    /// wrote. Call under the bucket lock.
    func compactKeepingAll(_ index: Int) {
        guard parsed.withLock({ $0[index] == nil }) else {
            compact(index) { _, _ in true }
            return
        }
        let old = SafeOpen.file(Buckets.name(index), in: folder.value, flags: O_RDONLY)
        guard old >= 0 else { return }
        defer { close(old) }
        var info = stat()
        guard fstat(old, &info) == 0, let (bytes, end) = Self.wholeLines(old) else { return }
        let merged = bytes.withUnsafeBytes { raw -> [UInt8]? in
            guard let table = IndexTable(file: UnsafeRawBufferPointer(rebasing: raw[..<end])) else { return nil }
            return IndexTable.merged(raw, table: table, upTo: end)
        }
        guard let merged else {
            compact(index) { _, _ in true }
            return
        }
        install(
            merged, index, replacing: old, sizeRead: Int(info.st_size), bytesRead: bytes.count, consumed: end,
            keptAll: true)
    }

    /// Rewrites bucket `index`'s index as a table of the latest put line of each entry
    /// that `keep` accepts (given its stored time in ns), its latest use folded in,
    /// dropping superseded, torn and use lines. Call under the bucket lock.
    /// Returns the entries kept.
    @discardableResult
    func compact(_ index: Int, keeping keep: (KeyDigest, _ storedAt: Int64) -> Bool) -> Int {
        let name = Buckets.name(index)
        let swept = parsed.withLock { $0.removeValue(forKey: index) }
        let old = SafeOpen.file(name, in: folder.value, flags: O_RDONLY)
        guard old >= 0 else { return 0 }
        defer { close(old) }
        var info = stat()
        guard fstat(old, &info) == 0 else { return 0 }
        // The file a sweep just parsed, when nothing was appended since; else read afresh.
        let read: ParsedFile
        if let swept, swept.inode == UInt64(info.st_ino), swept.bytes.count == Int(info.st_size) {
            read = swept
        } else {
            guard let (bytes, end) = Self.wholeLines(old) else { return 0 }
            read = ParsedFile(bytes: bytes, end: end, inode: UInt64(info.st_ino))
        }
        let bytes = read.bytes
        let consumed = read.end
        // The latest put line of each digest, copied as it is (no string is decoded unless a
        // use line moved its last use).
        let (puts, lineCount, table) = (read.puts, read.lineCount, read.table)
        guard table != nil || lineCount > 0 else { return 0 }
        let live = puts.filter { keep($0.key, $0.value.summary.storedAt) }
        // Already a table of exactly these entries, with no tail: leave the file (and its inode) alone.
        if let table, table.end == consumed, consumed == bytes.count, table.count == lineCount, live.count == lineCount
        {
            return live.count
        }
        let file = bytes.withUnsafeBytes { raw in
            IndexTable.file(live.map { ($0.key, $0.value.line, $0.value.summary.usedAt) }, from: raw)
        }
        let installed = install(
            file, index, replacing: old, sizeRead: Int(info.st_size), bytesRead: bytes.count, consumed: consumed,
            keptAll: live.count == puts.count)
        return installed ? live.count : puts.count
    }

    /// Renames `file`, a new table for bucket `index`, over the bucket file open as `old`,
    /// of which `bytesRead` bytes were read (`sizeRead` its size then) and `consumed` made
    /// the table, then copies over what was appended to `old` since. False when the table
    /// could not be written (the old file stays).
    @discardableResult
    private func install(
        _ file: [UInt8], _ index: Int, replacing old: Int32, sizeRead: Int, bytesRead: Int, consumed: Int, keptAll: Bool
    ) -> Bool {
        let name = Buckets.name(index)
        let temporary = FileIO.temporaryName(prefix: ".\(name)-")
        let fd = WriterTemporary.create(temporary, in: folder.value, flags: O_WRONLY)
        guard fd >= 0 else { return false }
        let written = FileIO.writeAll(file, to: fd)
        close(fd)
        guard written, renameat(folder.value, temporary, folder.value, name) == 0 else {
            unlinkat(folder.value, temporary, 0)
            return false
        }
        if keptAll { carryUsage(index, from: old, read: consumed) }
        // Lines appended to the old file after it was read: carry them over. (What the file
        // held past the read's cap, a forged or sparse giant, is dropped, not carried over.)
        let carryFrom = sizeRead > bytesRead ? max(sizeRead, consumed) : consumed
        if let tail = SafeOpen.readAll(old, from: carryFrom), !tail.isEmpty {
            _ = Self.append(tail, to: name, in: folder.value)
        }
        forget(index)
        return true
    }

    // MARK: - Counters

    /// Adds this process's `pending` change of bucket `index` to the bucket's counters
    /// (<doc:OnDiskFormat#Counters-and-trimming>). Call under the bucket's lock. Counters
    /// of another index file than the one appended to are left behind, for a recount; so
    /// are missing ones, unless the whole file is this process's appends (a new bucket).
    func report(_ index: Int, _ pending: UsageLedger.Pending) {
        guard !pending.isLost else { return }
        var counters = BucketUsage.read(index, in: usage.value)
        if counters == nil, let state = fileState(index), state.inode == pending.inode, state.size == pending.appended {
            counters = BucketUsage(inode: pending.inode)
        }
        guard var counters, counters.inode == pending.inode else { return }
        counters.length += pending.appended
        counters.entries = max(0, counters.entries + pending.entries)
        counters.bytes = max(0, counters.bytes + pending.bytes)
        if pending.oldest > 0 {
            counters.oldest = counters.oldest == 0 ? pending.oldest : min(counters.oldest, pending.oldest)
        }
        counters.widen(storedAt: pending.stored.storedFrom)
        counters.widen(storedAt: pending.stored.storedTo)
        counters.write(index, in: usage.value)
    }

    /// After a compaction that kept every entry: counters that were current for the old
    /// file `old` (read up to `consumed`) describe the table just renamed into place too.
    private func carryUsage(_ index: Int, from old: Int32, read consumed: Int) {
        var oldInfo = stat()
        var newInfo = stat()
        guard var counters = BucketUsage.read(index, in: usage.value), fstat(old, &oldInfo) == 0,
            counters.isCurrent(for: BucketFileState(inode: UInt64(oldInfo.st_ino), size: Int64(consumed))),
            fstatat(folder.value, Buckets.name(index), &newInfo, AT_SYMLINK_NOFOLLOW) == 0
        else { return }
        counters.inode = UInt64(newInfo.st_ino)
        counters.length = Int64(newInfo.st_size)
        counters.write(index, in: usage.value)
    }
}
