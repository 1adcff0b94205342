internal import CSDFetchShims
import Foundation
import Synchronization

/// The on-disk image cache shared by every `sdfetch` process using one directory.
///
/// Layout under `directory`:
/// - `entries/ab/<digest>`: one file per entry (see ``EntryFile``): the body, exactly the
///   bytes served (so `path` and `-o` hard links hand out the image itself), its metadata
///   in two extended attributes, its mtime the last use (LRU). `ab` is the digest's first
///   byte, 256 shards. Where the file system has no user extended attributes, the metadata
///   is in a sidecar `entries/ab/<digest>.meta`.
/// - `failed/ab/<digest>`: ``FailureRecord``s of the ``FailureBlacklist``.
/// - `tmp/`: small atomic writes (blacklist records, the cap record); `locks/`: the files
///   ``DirectoryLock`` describes.
///
/// One level of 256 shards keeps directories small up to millions of entries while a
/// full scan (`clean`, `enforceLimit`) opens only 256 directories.
///
/// `entries/` is marked as the top of a directory hierarchy (`chattr +T`), so ext4 spreads
/// the shard folders, and with them the entries' inodes, over its block groups rather than
/// packing them into its parent's. Without a journal, ext4 allocates no inode freed in the
/// last minute or more (`recently_deleted` in `fs/ext4/ialloc.c`) and scans past each one
/// on every allocation in that group: after a previous run or a `clean` deleted thousands
/// of files nearby, a 2,000-image cold run spent 2.2 s in the kernel instead of 0.4 s.
///
/// Thread-safe: it keeps no mutable state; the file system is the state, shared with
/// other processes.
public final class DiskCache: Sendable {
    public let directory: String
    let entriesDirectory: String
    let temporaryDirectory: String
    let failedDirectory: String
    let locksDirectory: String
    let now: @Sendable () -> Date
    /// A descriptor of `entries/` for short relative opens on the hit path.
    let entriesDescriptor: DirectoryDescriptor
    /// Set by this instance's first store (see ``forgetCapRecord()``).
    let hasStored = Atomic<Bool>(false)
    /// Whether new entries go straight to a `.meta` sidecar. Otherwise each store tries
    /// the attributes first and falls back to a sidecar where they are refused, so no
    /// start-up probe of the file system is needed.
    let usesSidecars: Bool
    /// Whether new entry files start unnamed (`O_TMPFILE`, where the file system has it).
    let usesUnnamedFiles: Bool

    /// Validators (`ETag`, `Last-Modified`) longer than this are not kept: real ones are a
    /// few dozen bytes, and the bound keeps every record under ``LineRecord/limit``.
    static let maxValidatorLength = 1024

    /// Opens (creating if needed) the cache at `directory`.
    ///
    /// - Parameter plainFiles: behave as on a file system with neither extended attributes
    ///   nor `O_TMPFILE` (NFSv3, FAT): `.meta` sidecars and named temporary files, for tests
    ///   of those paths. By default both features are used where the file system has them.
    /// - Throws: ``CacheError`` when the directory cannot be created or written.
    public init(
        directory: String, now: @escaping @Sendable () -> Date = Date.init, plainFiles: Bool = false
    ) throws(CacheError) {
        self.directory = directory
        self.entriesDirectory = directory + "/entries"
        self.temporaryDirectory = directory + "/tmp"
        self.failedDirectory = directory + "/failed"
        self.locksDirectory = directory + "/locks"
        self.now = now
        for path in [directory, entriesDirectory, temporaryDirectory, failedDirectory, locksDirectory] {
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw CacheError(path: directory, detail: "cannot create \(path): \(errnoText())")
            }
        }
        guard access(temporaryDirectory, W_OK) == 0 else {
            throw CacheError(path: directory, detail: "not writable: \(errnoText())")
        }
        entriesDescriptor = DirectoryDescriptor(path: entriesDirectory)
        // Best effort: only ext4 (and a few others) know the flag, and it is only an allocation hint.
        _ = CSDFetch_mark_top_directory(entriesDescriptor.value)
        usesSidecars = plainFiles
        usesUnnamedFiles = !plainFiles
    }

    /// The shard folder name of `key`: the digest's first byte in hex.
    static func shard(of key: URLKey) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let byte = Int(key.digest.high >> 56)
        return String(decoding: [digits[byte >> 4], digits[byte & 0xF]], as: UTF8.self)
    }

    /// Path of the entry file for `key`, whether or not it exists.
    public func bodyPath(for key: URLKey) -> String {
        "\(entriesDirectory)/\(Self.shard(of: key))/\(key.digest.hex)"
    }

    // MARK: - Reading

    /// The entry for `key`, fresh or stale, or nil when there is none (or it is unreadable
    /// or corrupt: damaged metadata is a miss, never a crash). Does not count as a use.
    public func entry(for key: URLKey) -> CacheEntry? {
        let path = bodyPath(for: key)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, var entry = Self.metadata(of: fd, at: path) else { return nil }
        entry.accessedAt = FileTime.date(info.st_mtim)
        return entry.url == key.string && entry.bytes == Int64(info.st_size) ? entry : nil
    }

    /// The whole metadata of the entry file open as `fd` (at `path`): summary and origin
    /// attributes, or the sidecar for what has no attribute. `accessedAt` is left unset.
    static func metadata(of fd: Int32, at path: String) -> CacheEntry? {
        let unset = Date(timeIntervalSince1970: 0)
        switch EntryFile.attribute(EntryFile.summaryAttribute, of: fd, EntrySummary.init(decoding:)) {
        case .damaged: return nil
        case .absent: return EntryFile.sidecar(path)?.entry
        case .found(let summary):
            let origin = EntryFile.attribute(EntryFile.originAttribute, of: fd) {
                CacheEntry(summary: summary, origin: $0, accessedAt: unset)
            }
            switch origin {
            case .found(let entry): return entry
            case .damaged: return nil
            case .absent:
                // An origin too long for an attribute: the sidecar has the whole record.
                guard let whole = EntryFile.sidecar(path)?.entry, whole.storedAt == summary.storedAt else { return nil }
                return whole
            }
        }
    }

    /// The summary of `key`'s entry if `isServable` accepts it, recorded as used now (LRU):
    /// the warm-run hit. One `openat` (relative to the held `entries/` descriptor, so the
    /// kernel walks two path components), `fgetxattr` of the summary, `futimens`, `close`.
    ///
    /// The URL is not compared: the file is named by a 128-bit digest of it.
    func hit(_ key: URLKey, isServable: (EntrySummary) -> Bool) -> EntrySummary? {
        let relative = "\(Self.shard(of: key))/\(key.digest.hex)"
        let fd = openat(entriesDescriptor.value, relative, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var summary: EntrySummary
        switch EntryFile.attribute(EntryFile.summaryAttribute, of: fd, EntrySummary.init(decoding:)) {
        case .found(let found): summary = found
        case .damaged: return nil
        case .absent:
            // A sidecar is a separate file: check that it describes this very body.
            var info = stat()
            guard let (entry, bytes) = EntryFile.sidecar(relative, relativeTo: entriesDescriptor.value),
                entry.url == key.string, fstat(fd, &info) == 0, Int64(info.st_size) == entry.bytes
            else { return nil }
            summary = entry.summary(originBytes: bytes)
        }
        guard isServable(summary) else { return nil }
        EntryFile.markUsed(fd, at: now())
        return summary
    }

    /// Records a use of `key`'s entry now (LRU): sets its mtime, nothing else.
    ///
    /// Best effort: a failure (entry removed meanwhile, file owned by another user) only
    /// leaves the old access time.
    public func touch(_ key: URLKey) {
        var times = [EntryFile.omittedTime, FileTime.timespec(now())]
        _ = utimensat(AT_FDCWD, bodyPath(for: key), &times, 0)
    }

    // MARK: - Writing

    /// Stores `body` with its metadata atomically and returns the new entry.
    ///
    /// A new entry is one ``NewEntryFile`` linked into place, with no lock; replacing an
    /// existing one (a re-fetch of a stale entry) renames under the shard lock, so `clean`
    /// never deletes the replacement by mistake. On any failure nothing new is visible.
    @discardableResult
    public func store(
        _ body: [UInt8], for key: URLKey, image: VerifiedImage, etag: String?, lastModified: String?
    ) throws(FetchFailure) -> CacheEntry {
        let shard = Self.shard(of: key)
        let date = now()
        let entry = CacheEntry(
            url: key.string, storedAt: date, accessedAt: date, etag: Self.keepable(etag),
            lastModified: Self.keepable(lastModified),
            format: image.format, bytes: Int64(body.count), width: image.width, height: image.height)
        let file = try NewEntryFile(in: "\(entriesDirectory)/\(shard)", unnamed: usesUnnamedFiles)
        try file.write(body)
        let path = bodyPath(for: key)
        // Before the body is named: a visible body always has its metadata.
        try writeMetadata(entry, of: file.fd, for: key)
        EntryFile.markUsed(file.fd, at: date)
        forgetCapRecord()
        if try !file.linkIfAbsent(at: path) {
            try shardLock(shard).withLock { () throws(FetchFailure) in try file.replace(at: path) }
        }
        return entry
    }

    /// Renews `entry` after a `304`: stored and access times become now, validators are
    /// updated when the server sent new ones; the body is not rewritten.
    ///
    /// Returns nil when the body changed since `entry` was read (another process stored a
    /// new version meanwhile): the newer entry wins and is left alone.
    public func renew(
        _ entry: CacheEntry, for key: URLKey, etag: String?, lastModified: String?
    ) throws(FetchFailure) -> CacheEntry? {
        let date = now()
        var renewed = entry
        renewed.storedAt = date
        renewed.accessedAt = date
        renewed.etag = Self.keepable(etag) ?? entry.etag
        renewed.lastModified = Self.keepable(lastModified) ?? entry.lastModified
        let path = bodyPath(for: key)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Only the file that was read, unchanged: its metadata still has the old stored time.
        guard let current = Self.metadata(of: fd, at: path), current.url == key.string,
            current.storedAt == entry.storedAt
        else { return nil }
        try writeMetadata(renewed, of: fd, for: key)
        EntryFile.markUsed(fd, at: date)
        return renewed
    }

    /// Sets the metadata of `key`'s entry file, open as `fd`: the summary attribute first
    /// (so it takes the room inside the inode), then the origin attribute; the whole record
    /// goes to the sidecar where attributes are unavailable or the origin is over their size
    /// limit.
    private func writeMetadata(_ entry: CacheEntry, of fd: Int32, for key: URLKey) throws(FetchFailure) {
        let sidecar = bodyPath(for: key) + EntryFile.sidecarSuffix
        let shardDirectory = "\(entriesDirectory)/\(Self.shard(of: key))"
        let origin = entry.originRecord
        let summary = entry.summary(originBytes: origin.count).encoded
        if !usesSidecars {
            if EntryFile.setAttribute(EntryFile.summaryAttribute, summary, of: fd) == nil {
                if EntryFile.setAttribute(EntryFile.originAttribute, origin, of: fd) == nil { return }
                // A stale origin (a renewal) would hide the sidecar from readers.
                EntryFile.removeAttribute(EntryFile.originAttribute, of: fd)
                let whole = entry.metadata
                try AtomicWrite.write(whole, to: sidecar, temporaryDirectory: shardDirectory)
                // The origin's bytes are now the sidecar's.
                let moved = entry.summary(originBytes: whole.count).encoded
                _ = EntryFile.setAttribute(EntryFile.summaryAttribute, moved, of: fd)
                return
            }
            // A stale summary (a renewal) would hide the sidecar from readers.
            EntryFile.removeAttribute(EntryFile.summaryAttribute, of: fd)
        }
        try AtomicWrite.write(entry.metadata, to: sidecar, temporaryDirectory: shardDirectory)
    }

    /// `validator` when it is short enough to keep (see ``maxValidatorLength``), else nil.
    static func keepable(_ validator: String?) -> String? {
        validator.flatMap { $0.utf8.count <= maxValidatorLength ? $0 : nil }
    }
}

/// An open directory descriptor owned by one ``DiskCache`` and closed with it; -1 when the
/// directory could not be opened, in which case relative opens simply fail (a miss).
final class DirectoryDescriptor: Sendable {
    let value: Int32

    init(path: String) {
        value = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    deinit {
        if value >= 0 { close(value) }
    }
}
