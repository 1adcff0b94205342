internal import CSDFetchShims
import Foundation

/// One cache entry on disk: a single file holding exactly the served bytes, its metadata
/// record (``CacheEntry``'s line format) in the extended attribute `user.sdfetch.entry`.
///
/// Why one file (SPEC: "one file per entry, metadata kept with it"): every file costs an
/// inode allocation and a directory insertion, and on the benchmark's ext4 those dominate
/// a cold run. A body plus a `.meta` file, each written to `tmp/` and renamed into place
/// under a lock, took about 20 system calls and two inodes per entry; this takes six and one.
///
/// Times: the file's mtime is the entry's last use (LRU), set explicitly with `futimens`
/// by the store and by every hit; the stored time is in the record. Not atime: any reader
/// of the file (a backup, `tar`, an `-o` hard link being viewed) would move it (SPEC: the
/// access time is updated explicitly, not through file-system atime); nothing writes a
/// cache file after it is named, so only sdfetch moves its mtime.
///
/// Writing goes through ``NewEntryFile``. File systems without user extended attributes
/// (tmpfs before Linux 6.6, NFSv3, FAT) keep the record in a sidecar `<digest>.meta`
/// instead, written before the body is named, so a visible body always has its metadata;
/// so does a record over the file system's attribute size limit (ext4: one 4 KiB block,
/// which a URL of several KiB exceeds).
enum EntryFile {
    static let attributeName = "user.sdfetch.entry"
    static let sidecarSuffix = ".meta"
    /// Suffix of named temporary files in shard folders (see ``NewEntryFile``).
    static let temporarySuffix = ".tmp"

    /// Whether files in `directory` take user extended attributes: tried once per
    /// ``DiskCache`` on an unnamed file (or, without `O_TMPFILE`, a named one, removed at once).
    static func supportsAttributes(in directory: String) -> Bool {
        guard let file = try? NewEntryFile(in: directory, creatingDirectory: false) else { return false }
        return setRecord([0x0A], of: file.fd) == nil
    }

    /// Removes the record attribute of the open file `fd`, if it has one.
    static func removeRecord(of fd: Int32) {
        _ = CSDFetch_fremovexattr(fd, attributeName)
    }

    /// Stores `record` in the attribute of the open file `fd`; the reason when refused.
    static func setRecord(_ record: [UInt8], of fd: Int32) -> String? {
        let result = record.withUnsafeBytes { CSDFetch_fsetxattr(fd, attributeName, $0.baseAddress!, $0.count) }
        return result == 0 ? nil : errnoText()
    }

    /// Opens the entry file at `path` (relative to `directory`, or absolute), reads its
    /// record and hands the record's bytes, the open descriptor and whether the record came
    /// from a sidecar to `body`. Nil when the file, its record or the sidecar is missing,
    /// longer than ``LineRecord/limit``, or unreadable.
    ///
    /// One `openat` and one `fgetxattr` into a stack buffer: this runs once per warm hit.
    static func read<T>(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD,
        _ body: (_ record: UnsafeRawBufferPointer, _ fd: Int32, _ fromSidecar: Bool) -> T?
    ) -> T? {
        let fd = openat(directory, path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withRecord(
            { CSDFetch_fgetxattr(fd, attributeName, $0, $1) },
            orSidecar: {
                LineRecord.read(path + sidecarSuffix, relativeTo: directory) { record, _ in body(record, fd, true) }
            },
            { body($0, fd, false) })
    }

    /// The record of the entry file at `path` (absolute), for callers that need only the
    /// record: one `lgetxattr`, no descriptor (`clean` and `stats` read one per entry).
    static func record<T>(atPath path: String, _ body: (_ record: UnsafeRawBufferPointer) -> T?) -> T? {
        withRecord(
            { CSDFetch_lgetxattr(path, attributeName, $0, $1) },
            orSidecar: { LineRecord.read(path + sidecarSuffix) { record, _ in body(record) } },
            body)
    }

    /// Reads the attribute with `get` (buffer, capacity) into a stack buffer and hands it to
    /// `body`; a file without the attribute may be a sidecar entry, anything else is damaged.
    private static func withRecord<T>(
        _ get: (UnsafeMutableRawPointer, Int) -> Int, orSidecar sidecar: () -> T?,
        _ body: (UnsafeRawBufferPointer) -> T?
    ) -> T? {
        let limit = LineRecord.limit
        let fromAttribute = withUnsafeTemporaryAllocation(byteCount: limit + 1, alignment: 8) { buffer -> T?? in
            let count = get(buffer.baseAddress!, limit + 1)
            if count > 0 && count <= limit { return .some(body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))) }
            return count < 0 && (errno == ENODATA || errno == ENOTSUP) ? nil : .some(nil)
        }
        return fromAttribute ?? sidecar()
    }

    /// The size of the record kept in the attribute of the file at `path`, or nil when it
    /// has none (a sidecar entry, or an orphan).
    static func attributeSize(_ path: String) -> Int64? {
        let size = CSDFetch_lgetxattr(path, attributeName, nil, 0)
        return size > 0 ? Int64(size) : nil
    }

    /// Records a use of the open entry file at `date`: sets its mtime, leaves its atime.
    /// Best effort, like `touch`: explicit times need the file's owner.
    static func markUsed(_ fd: Int32, at date: Date) {
        var times = [omittedTime, FileTime.timespec(date)]
        _ = futimens(fd, &times)
    }

    /// `UTIME_OMIT` (`(1l << 30) - 2l`; Glibc's Swift module does not export it).
    static let omittedTime = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
}

/// A cache entry file being written: created unnamed (`O_TMPFILE`) in its shard folder,
/// filled, given its record and times, then named in one step, so the entry appears
/// whole or not at all and a crash leaves nothing behind.
///
/// Where `O_TMPFILE` is unsupported, the file is created under a temporary name
/// (`<pid>-<random>.tmp`, in the same folder) and renamed instead; `clean` removes such
/// files once they are an hour old. Closing (and removing any temporary name) happens in
/// `deinit`, so every failure path cleans up.
final class NewEntryFile {
    let fd: Int32
    /// The temporary name when the file was created with one; nil for an unnamed file.
    private(set) var temporaryPath: String?
    let directory: String

    /// - Parameter creatingDirectory: create `directory` when it does not exist (shard
    ///   folders appear on first use; `clean` may remove empty ones).
    init(in directory: String, creatingDirectory: Bool = true) throws(FetchFailure) {
        self.directory = directory
        var fd = open(directory, O_WRONLY | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644)
        if fd < 0 && errno == ENOENT && creatingDirectory {
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw FetchFailure(.io, "cannot create \(directory): \(errnoText())")
            }
            fd = open(directory, O_WRONLY | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644)
        }
        // EOPNOTSUPP, EISDIR or EINVAL: no O_TMPFILE here (NFS, old kernels), use a name.
        if fd < 0 && errno != ENOENT && errno != EACCES && errno != ENOSPC && errno != EROFS {
            let path = "\(directory)/\(getpid())-\(UInt64.random(in: 0...UInt64.max))\(EntryFile.temporarySuffix)"
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 { temporaryPath = path }
        }
        guard fd >= 0 else { throw FetchFailure(.io, "cannot create a file in \(directory): \(errnoText())") }
        self.fd = fd
    }

    deinit {
        close(fd)
        if let temporaryPath { unlink(temporaryPath) }
    }

    /// Writes all of `bytes` (a failed write, such as a full disk, throws).
    func write(_ bytes: [UInt8]) throws(FetchFailure) {
        guard AtomicWrite.writeAll(bytes, to: fd) else {
            throw FetchFailure(.io, "cannot write to \(directory): \(errnoText())")
        }
    }

    /// Names the file `path` if nothing has that name yet. False when the name is taken;
    /// throws on other failures. After success the file is no longer temporary.
    func linkIfAbsent(at path: String) throws(FetchFailure) -> Bool {
        if let temporaryPath {
            guard link(temporaryPath, path) == 0 else {
                if errno == EEXIST { return false }
                throw FetchFailure(.io, "cannot create \(path): \(errnoText())")
            }
            unlink(temporaryPath)
            self.temporaryPath = nil
            return true
        }
        guard linkUnnamed(at: path) else {
            if errno == EEXIST { return false }
            throw FetchFailure(.io, "cannot create \(path): \(errnoText())")
        }
        return true
    }

    /// Names the file `path`, atomically replacing whatever had that name.
    func replace(at path: String) throws(FetchFailure) {
        if temporaryPath == nil {
            // An unnamed file cannot be renamed: give it a temporary name first.
            let named = "\(directory)/\(getpid())-\(UInt64.random(in: 0...UInt64.max))\(EntryFile.temporarySuffix)"
            guard linkUnnamed(at: named) else { throw FetchFailure(.io, "cannot create \(named): \(errnoText())") }
            temporaryPath = named
        }
        guard let temporaryPath, rename(temporaryPath, path) == 0 else {
            throw FetchFailure(.io, "cannot rename into \(path): \(errnoText())")
        }
        self.temporaryPath = nil
    }

    /// `linkat` of the unnamed file through `/proc/self/fd`, which needs no privilege
    /// (`AT_EMPTY_PATH` would need `CAP_DAC_READ_SEARCH`).
    private func linkUnnamed(at path: String) -> Bool {
        linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0
    }
}
