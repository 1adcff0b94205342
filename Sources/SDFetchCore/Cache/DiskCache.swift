internal import CSDFetchShims
import FoundationEssentials
import Glibc
import Synchronization

/// The on-disk image cache shared by every `sdfetch` process using one directory.
///
/// Layout (format 4, see ``CacheFormat``; <doc:OnDiskFormat> has the whole of it):
/// - `FORMAT`: the format's version.
/// - `entries/ab/<digest>`: one file per entry, exactly the image bytes (``EntryFile``);
///   `ab` is the digest's first byte, 256 buckets.
/// - `content/ab/<sha256>`: another hard link to an entry file, named by its bytes'
///   SHA-256, so entries with identical bytes share one file (``ContentFile``).
/// - `index/ab`: the bucket's index, the entries' metadata: a sorted table, then an
///   append-only log (``CacheIndex``, ``IndexTable``, ``IndexRecord``).
/// - `usage/ab`: the bucket's counters (entries, bytes, oldest use) that `--max-cache-size`
///   and `clean` trust instead of a walk (``BucketUsage``, <doc:OnDiskFormat#Counters-and-trimming>).
/// - `failed/ab/<digest>`: ``FailureRecord``s of the ``FailureBlacklist``.
/// - `hosts/<digest>`: the origins found down, for `--host-down-for` (``HostDownMemory``).
/// - `tmp/`: small atomic writes; `locks/`: the files ``DirectoryLock`` describes.
///
/// Everything is plain files, so `tar`, `zip`, `cp -r` and `rsync -a` carry a cache whole.
/// Nothing in the directory is trusted: every file is opened relative to a held folder
/// descriptor, links are never followed and only regular files are read (``SafeOpen``).
///
/// `entries/` is marked as the top of a directory hierarchy (`chattr +T`), so ext4 spreads
/// the bucket folders, and with them the entries' inodes, over its block groups: without a
/// journal ext4 skips inodes freed in the last minute or more on every allocation in their
/// group, and after a previous run's deletions nearby a cold run spent 2.2 s in the kernel
/// instead of 0.4 s.
///
/// Thread-safe: the index buckets are behind their own locks; the rest of the state is the
/// file system, shared with other processes.
public final class DiskCache: Sendable {
    public let directory: String
    let entriesDirectory: String
    let temporaryDirectory: String
    let now: @Sendable () -> Date
    let root: DirectoryDescriptor
    let entries: BucketFolders
    let failed: BucketFolders
    /// `content/`: the bucket folders of ``ContentFile``s, by SHA-256.
    let contents: BucketFolders
    let locks: DirectoryDescriptor
    /// `tmp/`: large downloads arrive here as unnamed files (``SpilledBody``).
    let temporary: DirectoryDescriptor
    let index: CacheIndex
    /// Set by this instance's first store (see ``forgetCapRecord()``).
    let hasStored = Atomic<Bool>(false)
    /// Whether new entry files start unnamed (`O_TMPFILE`, where the file system has it).
    let usesUnnamedFiles: Bool
    let waits: CacheWaits

    /// Validators (`ETag`, `Last-Modified`) longer than this are not kept: real ones are a
    /// few dozen bytes.
    static let maxValidatorLength = 1024

    /// Opens the cache at `directory`, creating it and any missing parents.
    ///
    /// - Parameters:
    ///   - plainFiles: never use `O_TMPFILE` (as on NFS or FAT), for tests of that path.
    ///   - useInterval: see ``CacheIndex/useInterval``.
    ///   - waits: how long to wait out a stuck lock holder and a fresh writer's temporary.
    ///   - readOnly: create and write nothing (`stats`, `path`, `failed list`, `--offline`,
    ///     a read-only cache): a missing directory or folder reads as empty.
    /// - Throws: ``CacheError`` when the path is not a directory, cannot be created or
    ///   written, or holds another version of the format (``CacheError/otherFormat``).
    public init(
        directory: String, now: @escaping @Sendable () -> Date = Date.init, plainFiles: Bool = false,
        useInterval: Duration = .seconds(600), readOnly: Bool = false, waits: CacheWaits = .standard
    ) throws(CacheError) {
        self.directory = directory
        self.entriesDirectory = directory + "/entries"
        self.temporaryDirectory = directory + "/tmp"
        self.now = now
        self.waits = waits
        if !readOnly { try Self.makeDirectory(directory) }
        let rootFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 || (readOnly && errno == ENOENT) else {
            throw CacheError(path: directory, detail: Self.unusable(errno))
        }
        root = DirectoryDescriptor(rootFD)
        switch rootFD < 0 ? .none : CacheFormat.read(in: rootFD) {
        case .current: break
        // Formats 2 and 3 wrote files format 4 reads as they are: naming the directory anew converts it.
        case .none, .previous: if !readOnly { try Self.writeFormat(in: rootFD, directory: directory) }
        case .other(let version):
            throw CacheError(
                path: directory,
                detail: "holds sdfetch cache format \(version); this sdfetch reads format \(CacheFormat.version) "
                    + "(`sdfetch clean` removes a format-1 cache, or choose another --cache-dir)",
                otherFormat: version)
        }
        func folder(_ name: String) throws(CacheError) -> DirectoryDescriptor {
            let fd = rootFD < 0 ? -1 : SafeOpen.directory(name, in: rootFD, create: !readOnly)
            guard fd >= 0 || (readOnly && errno == ENOENT) || rootFD < 0 else {
                throw CacheError(path: directory, detail: "\(name): \(Self.unusable(errno))")
            }
            return DirectoryDescriptor(fd)
        }
        let entriesFolder = try folder("entries")
        // Entry folders are held for the hit path when the open-file limit has room; failure
        // records are read only on misses, next to a network request: never held.
        entries = BucketFolders(parent: entriesFolder, holds: BucketFolders.limitAllowsHolding)
        failed = BucketFolders(parent: try folder("failed"), holds: false)
        contents = BucketFolders(parent: try folder("content"), holds: BucketFolders.limitAllowsHolding)
        locks = try folder("locks")
        index = CacheIndex(
            folder: try folder("index"), locks: locks, usage: try folder(BucketUsage.folderName),
            useInterval: useInterval,
            compacts: !readOnly)
        temporary = try folder("tmp")
        guard readOnly || faccessat(rootFD, "tmp", W_OK, 0) == 0 else {
            throw CacheError(path: directory, detail: "not writable: \(errnoText())")
        }
        // Best effort: only ext4 (and a few others) know the flag, and it is only an allocation hint.
        _ = CSDFetch_mark_top_directory(entriesFolder.value)
        usesUnnamedFiles = !plainFiles
    }

    /// `mkdir -p`: a fresh container has no `~/.cache` (sdfetch(1) ENVIRONMENT).
    static func makeDirectory(_ path: String) throws(CacheError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw CacheError(path: path, detail: "not a directory") }
            return
        }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw CacheError(path: path, detail: "cannot create \(prefix): \(errnoText())")
            }
        }
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CacheError(path: path, detail: "not a directory")
        }
    }

    private static func writeFormat(in root: Int32, directory: String) throws(CacheError) {
        let temporary = FileIO.temporaryName()
        let fd = openat(root, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CacheError(path: directory, detail: unusable(errno)) }
        let written = FileIO.writeAll(Array(CacheFormat.text.utf8), to: fd)
        close(fd)
        guard written, renameat(root, temporary, root, CacheFormat.fileName) == 0 else {
            let reason = errnoText()
            unlinkat(root, temporary, 0)
            throw CacheError(path: directory, detail: "cannot write \(CacheFormat.fileName): \(reason)")
        }
    }

    private static func unusable(_ code: Int32) -> String {
        switch code {
        case ENOTDIR, ELOOP: "not a directory"
        case EACCES, EPERM, EROFS: "not writable: \(errnoText(code))"
        default: errnoText(code)
        }
    }

    /// Path of the entry file for `key`, whether or not it exists.
    public func bodyPath(for key: URLKey) -> String {
        // `entries/ab/<digest>` written straight into the string: every warm hit carries it.
        entriesDirectory.withUTF8Bytes { folder in
            String(unsafeUninitializedCapacity: folder.count + 36) { out in
                _ = out.initialize(from: folder)
                out[folder.count] = UInt8(ascii: "/")
                key.digest.writeHex(digits: 2, into: UnsafeMutableBufferPointer(rebasing: out[(folder.count + 1)...]))
                out[folder.count + 3] = UInt8(ascii: "/")
                key.digest.writeHex(digits: 32, into: UnsafeMutableBufferPointer(rebasing: out[(folder.count + 4)...]))
                return folder.count + 36
            }
        }
    }

    // MARK: - Reading

    /// The entry for `key`, fresh or stale, when its file still holds the recorded bytes;
    /// nil otherwise. Does not count as a use.
    public func entry(for key: URLKey) -> CacheEntry? {
        guard let known = index.entry(for: key.digest) else { return nil }
        if known.url == key.redacted, isIntact(known, key.digest) { return known }
        // A file that does not match its line: another process may have replaced the entry
        // since this one read the bucket. (A key with no line at all is not looked up again:
        // a cold run's misses cost nothing.)
        index.refresh(Buckets.index(of: key.digest))
        guard let entry = index.entry(for: key.digest), entry.url == key.redacted else { return nil }
        return isIntact(entry, key.digest) ? entry : nil
    }

    /// Whether the index holds a record of `key` and a file still has its entry's name,
    /// whatever it holds now: an entry whose bytes changed, told apart from a miss when
    /// ``entry(for:)`` refuses it. An entry `clean`, `verify` or a trim removed is a miss,
    /// though its line may stay an hour (a compaction keeps the lines of the last hour for
    /// writers about to name their files).
    func hasChangedFile(for key: URLKey) -> Bool {
        guard index.entry(for: key.digest)?.url == key.redacted else { return false }
        return entries.with(Buckets.index(of: key.digest), create: false) { folder in
            var info = stat()
            return folder >= 0 && fstatat(folder, key.digest.hex, &info, AT_SYMLINK_NOFOLLOW) == 0
        }
    }

    /// The cache-lookup step of one URL: the warm-run hit, or what the network step needs.
    ///
    /// A servable record costs a search of its bucket's table, the parse of its line and
    /// one `fstatat`, and its use is noted
    /// (LRU); the URL is not compared, since the file and record are named by a 128-bit
    /// digest of it. A stale record is returned unchecked: only a revalidation needs its file
    /// (``checked(_:for:)``), and it runs off the reading loop. A servable record whose file
    /// changed is read again (``entry(for:)``: another process may have replaced it).
    public func lookup(_ key: URLKey, serving policy: ServePolicy, now: Date) -> CacheLookup {
        guard let known = index.entry(for: key.digest) else { return .miss }
        guard policy.allows(storedAt: known.storedAt, now: now) else { return .stale(known) }
        if isIntact(known, key.digest) {
            index.noteUse(key.digest, of: known, at: self.now())
            return .fresh(known)
        }
        guard let current = entry(for: key) else { return .miss }
        guard policy.allows(storedAt: current.storedAt, now: now) else { return .stale(current) }
        index.noteUse(key.digest, of: current, at: self.now())
        return .fresh(current)
    }

    /// `entry` (from a ``CacheLookup/stale(_:)``) when it is `key`'s and its file still holds
    /// its bytes, else nil: what may lend its validators to a conditional request.
    public func checked(_ entry: CacheEntry, for key: URLKey) -> CacheEntry? {
        entry.url == key.redacted && isIntact(entry, key.digest) ? entry : nil
    }

    /// Whether `digest`'s entry file still holds `entry`'s bytes (see ``EntryFile``).
    func isIntact(_ entry: CacheEntry, _ digest: KeyDigest) -> Bool {
        entries.with(Buckets.index(of: digest), create: false) { folder in
            guard folder >= 0 else { return false }
            switch EntryFile.check(entry, name: digest.hex, in: folder) {
            case .intact: return true
            case .changed: return false
            case .unstamped: return EntryFile.rehash(entry, name: digest.hex, in: folder)
            }
        }
    }

    /// Reads every index bucket now (the whole file of a small one, the table's fence and
    /// the tail of a large one), on a few threads of its own, and returns at once: for a
    /// run whose list will touch most buckets (a warm run spent a fifth of its time parsing
    /// buckets one by one in its single loop). Lookups meanwhile wait for their bucket.
    public func preloadIndex() {
        let index = self.index
        // Parsing is CPU work: one thread per core; more only take turns with the lookups.
        let threads = ProcessInfo.processInfo.activeProcessorCount
        DedicatedThread.start(name: "sdfetch-index-preload") {
            _ = BucketWorkers.map(Array(0..<Buckets.count), threads: threads) { bucket in index.preload(bucket) }
        }
    }

    /// Records a use of `key`'s entry now (LRU), written with ``flushUses()``.
    public func touch(_ key: URLKey) {
        guard let entry = index.entry(for: key.digest) else { return }
        index.noteUse(key.digest, of: entry, at: now())
    }

    /// Writes the uses noted since the last flush; the end of a run calls it.
    public func flushUses() {
        index.flushUses()
    }

    // MARK: - Writing

    /// Stores `body` with its metadata atomically and returns the new entry.
    ///
    /// The file is written unnamed and stamped, its index line appended, and then it is
    /// named: a named file always has its line. A new entry takes no lock; replacing an
    /// existing one renames and appends again under the bucket lock (see ``DirectoryLock``).
    /// On any failure nothing new is visible.
    ///
    /// - Parameter waitingForLock: false on the cooperative pool: when the bucket's lock is
    ///   held elsewhere (a `clean` removing a batch), returns nil at once, with nothing
    ///   named, and the caller stores again where it may wait (``BlockingPool``).
    @discardableResult
    public func store(
        _ body: [UInt8], spilled: SpilledBody? = nil, for key: URLKey, image: VerifiedImage, etag: String?,
        lastModified: String?, waitingForLock: Bool = true
    ) throws(FetchFailure) -> CacheEntry? {
        let date = now()
        let entry = CacheEntry(
            url: key.redacted, storedAt: date, accessedAt: date, etag: Self.keepable(etag),
            lastModified: Self.keepable(lastModified), format: image.format, bytes: Int64(body.count),
            width: image.width, height: image.height, sha256: body.withUnsafeBytes(EntryFile.sha256(of:)),
            stamp: EntryFile.stamp(for: date))
        return try write(entry, key.digest, bytes: body, spilled: spilled, waitingForLock: waitingForLock)
    }

    /// Writes `bytes` as `digest`'s entry file and names it, as ``store(_:spilled:for:image:etag:lastModified:waitingForLock:)``
    /// describes; `merge` copies another cache's entries with it. A `spilled` download that
    /// holds the same bytes becomes the entry file itself, without writing them again.
    /// Returns the entry as stored: its stamp is an existing content file's when it shares
    /// that file (``ContentFile``). Nil only when `waitingForLock` is false and the bucket's
    /// lock is held elsewhere.
    @discardableResult
    func write(
        _ entry: CacheEntry, _ digest: KeyDigest, bytes: [UInt8], spilled: SpilledBody? = nil,
        waitingForLock: Bool = true
    ) throws(FetchFailure) -> CacheEntry? {
        let bucket = Buckets.index(of: digest)
        return try entries.with(bucket, create: true) { (folder) throws(FetchFailure) -> CacheEntry? in
            guard folder >= 0 else { throw FetchFailure(.io, "cannot open the cache folder \(Buckets.name(bucket))") }
            return try write(entry, digest, bytes: bytes, spilled: spilled, in: folder, waitingForLock: waitingForLock)
        }
    }

    private func write(
        _ entry: CacheEntry, _ digest: KeyDigest, bytes: [UInt8], spilled: SpilledBody?, in folder: Int32,
        waitingForLock: Bool
    ) throws(FetchFailure) -> CacheEntry? {
        let bucket = Buckets.index(of: digest)
        var entry = entry
        let file: NewEntryFile
        if let spilled, let adopted = NewEntryFile(adopting: spilled, in: folder) {
            file = adopted
        } else {
            file = try newFile(holding: bytes, in: folder)
        }
        EntryFile.setStamp(file.fd, entry.stamp)
        // Named as its content file first: for new bytes, the usual case, that is the one
        // extra call sharing costs. A name already taken is the file to share, once checked
        // (<doc:OnDiskFormat#Identical-bytes>): this entry links it under its stamp.
        let contentBucket = ContentFile.bucket(of: entry.sha256)
        let shared = contents.with(contentBucket, create: true) { content -> (fd: Int32, stamp: Int64)? in
            guard content >= 0, !file.link(as: entry.sha256, in: content), errno == EEXIST else { return nil }
            guard Int64(bytes.count) == entry.bytes else { return nil }
            return ContentFile.open(entry.sha256, holding: bytes, in: content, now: EntryFile.stamp(for: now()))
        }
        defer { if let shared { close(shared.fd) } }
        forgetCapRecord()
        if let shared {
            entry.stamp = shared.stamp
            EntryFile.setStamp(file.fd, entry.stamp)
        }
        let record = IndexRecord.put(digest, entry)
        // What the entry changes in its bucket's counters (<doc:OnDiskFormat#Counters-and-trimming>),
        // noted before its line is appended: a compaction that line may start reports the
        // counters first, and they must hold the entry with its line. Taken back if it fails.
        let previous = index.entry(for: digest)
        let added = previous == nil ? 1 : 0
        let change =
            entry.bytes + Int64(IndexRecord.lineLength(of: entry))
            - (previous.map { $0.bytes + Int64(IndexRecord.lineLength(of: $0)) } ?? 0)
        index.ledger.changed(
            bucket, entries: added, bytes: change, usedAt: FileTime.nanoseconds(entry.accessedAt),
            storedAt: FileTime.nanoseconds(entry.storedAt))
        do throws(FetchFailure) {
            let stored = try name(
                file, shared: shared, record, digest, bucket: bucket, bytes: bytes, in: folder,
                waitingForLock: waitingForLock)
            if !stored { index.ledger.changed(bucket, entries: -added, bytes: -change, usedAt: 0) }
            return stored ? entry : nil
        } catch {
            index.ledger.changed(bucket, entries: -added, bytes: -change, usedAt: 0)
            throw error
        }
    }

    /// Appends `record` and names `file` (or the `shared` content file) as `digest`'s entry;
    /// false only when `waitingForLock` is false and the bucket's lock is held elsewhere.
    private func name(
        _ file: NewEntryFile, shared: (fd: Int32, stamp: Int64)?, _ record: IndexRecord, _ digest: KeyDigest,
        bucket: Int, bytes: [UInt8], in folder: Int32, waitingForLock: Bool
    ) throws(FetchFailure) -> Bool {
        try index.append(record)
        if let shared, UnnamedFileLink.link(shared.fd, as: digest.hex, in: folder) { return true }
        if try link(file, as: digest.hex, bytes: bytes, in: folder) { return true }
        let replace = { [index] () throws(FetchFailure) in
            // Bytes already held replace through their content file, as a new store shares it.
            if shared.map({ SharedReplacement.replace(digest.hex, in: folder, with: $0.fd) }) != true {
                do throws(FetchFailure) {
                    try file.replace(digest.hex)
                } catch {
                    try self.renewed(file, after: error, bytes: bytes, in: folder).replace(digest.hex)
                }
            }
            try index.append(record)
        }
        // Not named, so not visible: the line appended above describes no file yet, and a
        // store that comes back here appends its own.
        guard waitingForLock else { return try bucketLock(bucket).withLockIfFree(replace) != nil }
        // A holder stuck past the wait (a stopped process) is not waited for (<doc:OnDiskFormat#Locks>).
        try bucketLock(bucket).withLock(waitingAtMost: waits.bucketLock, replace)
        return true
    }

    private func newFile(holding bytes: [UInt8], in folder: Int32) throws(FetchFailure) -> NewEntryFile {
        let file = try NewEntryFile(in: folder, unnamed: usesUnnamedFiles)
        try bytes.withUnsafeBytes { raw in Result { () throws(FetchFailure) in try file.write(raw) } }.get()
        return file
    }

    /// ``NewEntryFile/linkIfAbsent(as:)``, and when the file can no longer be linked, a
    /// ``renewed(_:after:bytes:in:)`` copy of it.
    private func link(
        _ file: NewEntryFile, as name: String, bytes: [UInt8], in folder: Int32
    ) throws(FetchFailure) -> Bool {
        do throws(FetchFailure) {
            return try file.linkIfAbsent(as: name)
        } catch {
            return try renewed(file, after: error, bytes: bytes, in: folder).linkIfAbsent(as: name)
        }
    }

    /// A new file with `file`'s bytes and stamp, for a `file` that failed to be named with
    /// `error` because it lost its last name: it was named only as its content file, and a
    /// `clean` removed that name meanwhile (a file without names cannot be named again). The
    /// bytes come from memory, or for a download spilled to disk (`bytes` empty) from the
    /// file itself, still open and whole. Any other failure is rethrown.
    private func renewed(
        _ file: NewEntryFile, after error: FetchFailure, bytes: [UInt8], in folder: Int32
    ) throws(FetchFailure) -> NewEntryFile {
        var info = stat()
        guard fstat(file.fd, &info) == 0, info.st_nlink == 0 else { throw error }
        let again: NewEntryFile
        if Int64(bytes.count) == Int64(info.st_size) {
            again = try newFile(holding: bytes, in: folder)
        } else {
            again = try NewEntryFile(in: folder, unnamed: usesUnnamedFiles)
            try again.copy(from: file.fd, bytes: Int64(info.st_size))
        }
        EntryFile.setStamp(again.fd, Int64(info.st_mtim.tv_sec))
        return again
    }

    /// Where ``TransferRequest/spillFolder`` points: `tmp/`, or -1 for a read-only cache.
    public var spillFolder: Int32 { temporary.value }

    /// Renews `entry` after a `304`: stored and access times become now, validators are
    /// updated when the server sent new ones; the body is not rewritten.
    ///
    /// Returns nil when the entry changed since it was read (another store, or its file
    /// was altered): the caller then serves what is there, or fetches again.
    public func renew(
        _ entry: CacheEntry, for key: URLKey, etag: String?, lastModified: String?
    ) throws(FetchFailure) -> CacheEntry? {
        guard let current = index.entry(for: key.digest), current == entry, isIntact(entry, key.digest) else {
            return nil
        }
        let date = now()
        var renewed = entry
        renewed.storedAt = FileTime.normalized(date)
        renewed.accessedAt = renewed.storedAt
        renewed.etag = Self.keepable(etag) ?? entry.etag
        renewed.lastModified = Self.keepable(lastModified) ?? entry.lastModified
        // Noted before the append, as a store's change is (see write).
        let bucket = Buckets.index(of: key.digest)
        let bytes = Int64(IndexRecord.lineLength(of: renewed) - IndexRecord.lineLength(of: entry))
        index.ledger.changed(
            bucket, entries: 0, bytes: bytes, usedAt: 0, storedAt: FileTime.nanoseconds(renewed.storedAt))
        do throws(FetchFailure) {
            try index.append(.put(key.digest, renewed))
        } catch {
            index.ledger.changed(bucket, entries: 0, bytes: -bytes, usedAt: 0)
            throw error
        }
        return renewed
    }

    /// `validator` when it is short enough to keep (see ``maxValidatorLength``) and printable
    /// ASCII, else nil. Text a server sent is sent back in a header: a CR or LF in it would
    /// smuggle a header of the server's choosing into a later request (<doc:Security>).
    /// Also asked before sending a stored validator: the index is untrusted.
    static func keepable(_ validator: String?) -> String? {
        validator.flatMap { text in
            text.utf8.count <= maxValidatorLength && text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) ? text : nil
        }
    }
}
