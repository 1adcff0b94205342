import Foundation
import Synchronization

/// The on-disk image cache shared by every `sdfetch` process using one directory.
///
/// Layout under `directory`:
/// - `entries/ab/<digest>`: the body, exactly the bytes served (so `path` and `-o` hard
///   links hand out the image itself); `ab` is the digest's first byte, 256 shards.
///   Its mtime mirrors the stored time.
/// - `entries/ab/<digest>.meta`: the ``CacheEntry`` in the line format described there;
///   its mtime is the LRU access time, set explicitly (atime is unusable on Linux).
/// - `failed/ab/<digest>`: ``FailureRecord``s of the ``FailureBlacklist``.
/// - `tmp/`: writes in progress; `locks/`: the files ``DirectoryLock`` describes.
///
/// One level of 256 shards keeps directories small up to millions of entries while a
/// full scan (`clean`, `enforceLimit`) opens only 256 directories. Thread-safe: it keeps no
/// mutable state; the file system is the state, shared with other processes.
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

    /// Validators (`ETag`, `Last-Modified`) longer than this are not kept: real ones are a
    /// few dozen bytes, and the bound keeps every `.meta` file under ``LineRecord/limit``.
    static let maxValidatorLength = 1024

    /// Opens (creating if needed) the cache at `directory`.
    ///
    /// - Throws: ``CacheError`` when the directory cannot be created or written.
    public init(directory: String, now: @escaping @Sendable () -> Date = Date.init) throws(CacheError) {
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
    }

    /// The shard folder name of `key`: the digest's first byte in hex.
    static func shard(of key: URLKey) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let byte = Int(key.digest.high >> 56)
        return String(decoding: [digits[byte >> 4], digits[byte & 0xF]], as: UTF8.self)
    }

    /// Path of the body file for `key`, whether or not it exists.
    public func bodyPath(for key: URLKey) -> String {
        "\(entriesDirectory)/\(Self.shard(of: key))/\(key.digest.hex)"
    }

    func metadataPath(for key: URLKey) -> String { bodyPath(for: key) + ".meta" }

    // MARK: - Reading

    /// The entry for `key`, fresh or stale, or nil when there is none (or it is unreadable
    /// or corrupt: a damaged `.meta` is a miss, never a crash). Does not count as a use.
    public func entry(for key: URLKey) -> CacheEntry? {
        LineRecord.read(metadataPath(for: key)) { bytes, fd in
            guard let modified = LineRecord.modified(fd),
                let entry = CacheEntry(metadata: bytes, accessedAt: modified), entry.url == key.string
            else { return nil }
            return entry
        }
    }

    /// The entry for `key` if `isServable` accepts it, recorded as used now (LRU): the
    /// warm-run hit. One `openat` (relative to the held `entries/` descriptor, so the
    /// kernel walks two path components), `read`, `futimens`, `close` of the `.meta` file.
    func hit(_ key: URLKey, isServable: (CacheEntry) -> Bool) -> CacheEntry? {
        let relative = "\(Self.shard(of: key))/\(key.digest.hex).meta"
        return LineRecord.read(relative, relativeTo: entriesDescriptor.value) { bytes, fd in
            // The old access time is not needed: it is replaced right away.
            guard var entry = CacheEntry(metadata: bytes, accessedAt: Date(timeIntervalSince1970: 0)),
                entry.url == key.string, isServable(entry)
            else { return nil }
            entry.accessedAt = now()
            // Best effort, like `touch`: explicit times need the file's owner, not write access.
            var times = [FileTime.timespec(entry.accessedAt), FileTime.timespec(entry.accessedAt)]
            _ = futimens(fd, &times)
            return entry
        }
    }

    /// Records a use of `key`'s entry now (LRU): sets its `.meta` mtime, nothing else.
    ///
    /// Best effort: a failure (entry removed meanwhile, file owned by another user) only
    /// leaves the old access time.
    public func touch(_ key: URLKey) {
        FileTime.set(metadataPath(for: key), to: now())
    }

    // MARK: - Writing

    /// Stores `body` with its metadata atomically and returns the new entry.
    ///
    /// Both files are written to `tmp/` first, unlocked; only the renames run under the
    /// shard lock (see ``DirectoryLock``). On any failure nothing new is visible.
    @discardableResult
    public func store(
        _ body: [UInt8], for key: URLKey, image: VerifiedImage, etag: String?, lastModified: String?
    ) throws(FetchFailure) -> CacheEntry {
        let shard = Self.shard(of: key)
        let shardDirectory = "\(entriesDirectory)/\(shard)"
        if mkdir(shardDirectory, 0o755) != 0 && errno != EEXIST {
            throw FetchFailure(.io, "cannot create \(shardDirectory): \(errnoText())")
        }
        let date = now()
        let entry = CacheEntry(
            url: key.string, storedAt: date, accessedAt: date, etag: Self.keepable(etag),
            lastModified: Self.keepable(lastModified),
            format: image.format, bytes: Int64(body.count), width: image.width, height: image.height)
        let bodyTemporary = try AtomicWrite.writeTemporary(body, in: temporaryDirectory, modified: date)
        let metaTemporary: String
        do throws(FetchFailure) {
            metaTemporary = try AtomicWrite.writeTemporary(entry.metadata, in: temporaryDirectory, modified: date)
        } catch {
            unlink(bodyTemporary)
            throw error
        }
        let bodyPath = bodyPath(for: key)
        let metaPath = bodyPath + ".meta"
        forgetCapRecord()
        try shardLock(shard).withLock { () throws(FetchFailure) in
            // Hide the old entry first: a crash between the renames then leaves a body
            // without metadata (a miss), never old metadata describing a new body.
            unlink(metaPath)
            do throws(FetchFailure) {
                try AtomicWrite.commit(bodyTemporary, to: bodyPath)
            } catch {
                unlink(metaTemporary)
                throw error
            }
            do throws(FetchFailure) {
                try AtomicWrite.commit(metaTemporary, to: metaPath)
            } catch {
                unlink(bodyPath)
                throw error
            }
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
        let temporary = try AtomicWrite.writeTemporary(renewed.metadata, in: temporaryDirectory, modified: date)
        let bodyPath = bodyPath(for: key)
        return try shardLock(Self.shard(of: key)).withLock { () throws(FetchFailure) -> CacheEntry? in
            var info = stat()
            guard stat(bodyPath, &info) == 0, Int64(info.st_size) == entry.bytes,
                self.entry(for: key)?.storedAt == entry.storedAt
            else {
                unlink(temporary)
                return nil
            }
            FileTime.set(bodyPath, to: date)
            try AtomicWrite.commit(temporary, to: bodyPath + ".meta")
            return renewed
        }
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
