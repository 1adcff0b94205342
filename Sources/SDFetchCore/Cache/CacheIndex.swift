import FoundationEssentials
import Glibc
import Synchronization

/// The metadata of every entry: 256 append-only index files under `index/`, one per bucket,
/// read into memory on first use (see ``IndexBucket`` and ``IndexRecord``).
///
/// Why buckets of lines rather than a file per entry: an entry stays one inode (its image
/// bytes), a warm hit needs no metadata read of its own, and plain files survive every way
/// CI systems save a directory (`tar`, `zip`, `cp -r`, `rsync -a`), which extended
/// attributes did not.
///
/// ## Sharing with other processes
/// - Writers append whole lines with one `O_APPEND` write each, without a lock: the kernel
///   orders appends to one file, and the per-line check rejects anything torn.
/// - Compaction (``compact(_:keeping:)``, by `clean` and `verify`) rewrites an index file
///   under its bucket's lock and renames it into place, then copies over
///   whatever was appended to the old file meanwhile. An appender that finds, after its
///   write, that the name now holds another file writes its line again: a duplicate line is
///   harmless, a lost one is not.
/// - Each process reads a bucket once, then applies its own writes, and reads what others
///   appended only when a line it holds no longer matches its file (``DiskCache/entry(for:)``):
///   an entry another process stores during this run is fetched again rather than looked up.
///
/// Thread-safe: each bucket sits behind its own `Mutex`.
final class CacheIndex: Sendable {
    let folder: DirectoryDescriptor
    private let slots: [Slot]
    /// A use is appended only when the last recorded one is older than this, so warm runs
    /// close together add nothing and the bucket grows by at most one line per entry per
    /// interval. The first use after a store is always appended (see ``noteUse(_:at:)``).
    let useInterval: Duration

    private final class Slot: Sendable {
        let bucket = Mutex(IndexBucket())
    }

    init(folder: DirectoryDescriptor, useInterval: Duration) {
        self.folder = folder
        self.useInterval = useInterval
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
        guard withFile(index, { bucket.read(from: $0) }) != nil else { return bucket.markEmpty() }
    }

    /// Runs `body` with bucket `index`'s index file open for reading; nil when there is none
    /// (or it is not a regular file).
    private func withFile<T>(_ index: Int, _ body: (Int32) -> T) -> T? {
        let fd = SafeOpen.file(Buckets.name(index), in: folder.value, flags: O_RDONLY)
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

    /// Reads bucket `index`'s index ahead of its first use (``DiskCache/preloadIndex()``).
    /// The file is parsed outside the bucket's lock and installed only if nobody loaded it
    /// meanwhile: a lookup never waits for a preload thread preempted halfway through a file
    /// (on two cores the lookups and the preload threads outnumber the cores); at worst a
    /// bucket is parsed twice.
    func preload(_ index: Int) {
        guard !slots[index].bucket.withLock({ $0.isLoaded }) else { return }
        let loaded = read(index)
        slots[index].bucket.withLock { bucket in
            if !bucket.isLoaded && bucket.pendingUses.isEmpty { bucket = loaded }
        }
    }

    /// Reads what other processes appended to bucket `index` since this process last looked.
    func refresh(_ index: Int) {
        slots[index].bucket.withLock { bucket in load(index, into: &bucket) }
    }

    /// Bucket `index`'s index as the file holds it now, read without keeping it.
    func read(_ index: Int) -> IndexBucket {
        var bucket = IndexBucket()
        load(index, into: &bucket)
        return bucket
    }

    /// Bucket `index`'s index as ``IndexRecord/Summary``s, read without keeping it.
    func summaries(_ index: Int) -> [KeyDigest: IndexRecord.Summary] {
        let bytes = withFile(index) { SafeOpen.readAll($0) } ?? nil
        guard let bytes, let end = bytes.lastIndex(of: 0x0A) else { return [:] }
        return bytes.withUnsafeBytes { IndexBucket.latestPuts(in: $0, upTo: end + 1).puts.mapValues(\.summary) }
    }

    /// Forgets bucket `index`'s index, so the next use reads it afresh (after a compaction).
    func forget(_ index: Int) {
        slots[index].bucket.withLock { $0.invalidate() }
    }

    func entry(for digest: KeyDigest) -> CacheEntry? {
        withBucket(Buckets.index(of: digest)) { $0.entries[digest] }
    }

    // MARK: - Writing

    /// Appends `record` to its bucket file and applies it in memory.
    func append(_ record: IndexRecord) throws(FetchFailure) {
        let index = Buckets.index(of: record.digest)
        try withBucket(index) { (bucket: inout IndexBucket) throws(FetchFailure) in
            guard Self.append(record.line, to: Buckets.name(index), in: folder.value) else {
                throw FetchFailure(.io, "cannot write the cache index: \(errnoText())")
            }
            bucket.apply(record)
        }
    }

    /// Notes a use of `digest` at `date`: the entry's access time in memory moves at once,
    /// and ``flushUses()`` writes it when the last recorded use was at least ``useInterval``
    /// before, or when the entry has not been used since it was stored.
    ///
    /// A store records its time as the access time too, so without the second rule a hit
    /// within ``useInterval`` of a store (a run repeated a minute later) left the entry
    /// looking as old as its store, and a trim removed the entries just used before those
    /// never used again.
    func noteUse(_ digest: KeyDigest, at date: Date) {
        withBucket(Buckets.index(of: digest)) { bucket in
            guard let entry = bucket.entries[digest], date > entry.accessedAt else { return }
            let isFirstUse = entry.accessedAt <= entry.storedAt
            guard isFirstUse || date.timeIntervalSince(entry.accessedAt) >= useInterval.timeInterval else { return }
            bucket.noteUse(digest, at: FileTime.nanoseconds(date))
        }
    }

    /// Appends the noted uses, one write per bucket. Best effort: a use that cannot be
    /// written only makes its entry look older to the LRU.
    func flushUses() {
        for index in 0..<Buckets.count {
            slots[index].bucket.withLock { bucket in
                guard !bucket.pendingUses.isEmpty else { return }
                let records = bucket.takePendingUses()
                _ = Self.append(records.flatMap(\.line), to: Buckets.name(index), in: folder.value)
            }
        }
    }

    /// The append protocol (see the type's documentation): true once `bytes` are in the
    /// file that has the bucket's name.
    static func append(_ bytes: [UInt8], to name: String, in folder: Int32) -> Bool {
        for _ in 0..<8 {
            let fd = SafeOpen.file(name, in: folder, flags: O_WRONLY | O_APPEND | O_CREAT)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var written = stat()
            var named = stat()
            guard FileIO.writeAll(bytes, to: fd), fstat(fd, &written) == 0 else { return false }
            if fstatat(folder, name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_ino == written.st_ino { return true }
        }
        return false
    }

    // MARK: - Compaction

    /// Rewrites bucket `index`'s index with the latest line of each entry that `keep`
    /// accepts (given its stored time in ns), and its latest use, dropping superseded, torn
    /// and older use lines. Call under the bucket lock.
    /// Returns the entries kept.
    @discardableResult
    func compact(_ index: Int, keeping keep: (KeyDigest, _ storedAt: Int64) -> Bool) -> Int {
        let name = Buckets.name(index)
        let old = SafeOpen.file(name, in: folder.value, flags: O_RDONLY)
        guard old >= 0 else { return 0 }
        defer { close(old) }
        guard let bytes = SafeOpen.readAll(old) else { return 0 }
        let consumed = (bytes.lastIndex(of: 0x0A) ?? -1) + 1
        // The latest put line of each digest, copied as it is (no string is decoded), and
        // the latest use after it, written as one more line.
        let (puts, lineCount) = bytes.withUnsafeBytes { IndexBucket.latestPuts(in: $0, upTo: consumed) }
        let live = puts.filter { keep($0.key, $0.value.summary.storedAt) }
        // Nothing to drop: leave the file (and its inode) alone.
        if live.count == lineCount { return live.count }
        var lines: [UInt8] = []
        for (digest, put) in live.sorted(by: { $0.value.line.lowerBound < $1.value.line.lowerBound }) {
            lines.append(0x0A)
            lines += bytes[put.line]
            lines.append(0x0A)
            if put.isUsedSince { lines += IndexRecord.use(digest, usedAt: put.summary.usedAt).line }
        }
        let temporary = FileIO.temporaryName(prefix: ".\(name)-")
        let fd = SafeOpen.file(temporary, in: folder.value, flags: O_WRONLY | O_CREAT | O_EXCL)
        guard fd >= 0 else { return puts.count }
        let written = FileIO.writeAll(lines, to: fd)
        close(fd)
        guard written, renameat(folder.value, temporary, folder.value, name) == 0 else {
            unlinkat(folder.value, temporary, 0)
            return puts.count
        }
        // Lines appended to the old file after it was read: carry them over.
        if let tail = SafeOpen.readAll(old, from: consumed), !tail.isEmpty {
            _ = Self.append(tail, to: name, in: folder.value)
        }
        forget(index)
        return live.count
    }
}
