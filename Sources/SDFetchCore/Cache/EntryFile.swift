internal import CSDFetchShims
import Foundation

/// One cache entry on disk: a single file holding exactly the served bytes, its metadata
/// in two extended attributes: `user.sdfetch.entry`, the ``EntrySummary`` (small enough
/// for ext4 to keep inside the inode), and `user.sdfetch.origin`, the URL and validators
/// (``CacheEntry/originRecord``).
///
/// Why one file (SPEC: "one file per entry, metadata kept with it"): every file costs an
/// inode allocation and a directory insertion, and on the benchmark's ext4 those dominate
/// a cold run. A body plus a `.meta` file, each written to `tmp/` and renamed into place
/// under a lock, took about 20 system calls and two inodes per entry; this takes seven and
/// one. A warm hit reads only the summary.
///
/// Times: the file's mtime is the entry's last use (LRU), set explicitly with `futimens`
/// by the store and by every hit; the stored time is in the summary. Not atime: any reader
/// of the file (a backup, `tar`, an `-o` hard link being viewed) would move it (SPEC: the
/// access time is updated explicitly, not through file-system atime); nothing writes a
/// cache file after it is named, so only sdfetch moves its mtime.
///
/// Writing goes through ``NewEntryFile``. File systems without user extended attributes
/// (tmpfs before Linux 6.6, NFSv3, FAT) keep the whole record in a sidecar `<digest>.meta`
/// instead, written before the body is named, so a visible body always has its metadata;
/// so does an origin record over the file system's attribute size limit (ext4: one 4 KiB
/// block, which a URL of several KiB exceeds), the summary then staying in its attribute.
enum EntryFile {
    static let summaryAttribute = "user.sdfetch.entry"
    static let originAttribute = "user.sdfetch.origin"
    static let sidecarSuffix = ".meta"
    /// Suffix of named temporary files in shard folders (see ``NewEntryFile``).
    static let temporarySuffix = ".tmp"

    /// What reading an attribute found.
    enum Lookup<Value> {
        case found(Value)
        /// The file has no such attribute (or its file system none at all): see the sidecar.
        case absent
        /// Present but unreadable or malformed: the entry is damaged.
        case damaged

        var isAbsent: Bool {
            if case .absent = self { true } else { false }
        }
    }

    /// Stores `value` as attribute `name` of the open file `fd`; the reason when refused.
    static func setAttribute(_ name: String, _ value: [UInt8], of fd: Int32) -> String? {
        let result = value.withUnsafeBytes { CSDFetch_fsetxattr(fd, name, $0.baseAddress!, $0.count) }
        return result == 0 ? nil : errnoText()
    }

    /// Removes attribute `name` of the open file `fd`, if it has one.
    static func removeAttribute(_ name: String, of fd: Int32) {
        _ = CSDFetch_fremovexattr(fd, name)
    }

    /// Reads attribute `name` of the open file `fd` into a stack buffer and decodes it.
    static func attribute<T>(
        _ name: String, of fd: Int32, _ decode: (UnsafeRawBufferPointer) -> T?
    ) -> Lookup<T> {
        lookup({ CSDFetch_fgetxattr(fd, name, $0, $1) }, decode)
    }

    /// Reads attribute `name` of the file at `path` (absolute) without opening it: one
    /// `lgetxattr` (`clean` and `stats` read one per entry).
    static func attribute<T>(
        _ name: String, atPath path: String, _ decode: (UnsafeRawBufferPointer) -> T?
    ) -> Lookup<T> {
        lookup({ CSDFetch_lgetxattr(path, name, $0, $1) }, decode)
    }

    private static func lookup<T>(
        _ get: (UnsafeMutableRawPointer, Int) -> Int, _ decode: (UnsafeRawBufferPointer) -> T?
    ) -> Lookup<T> {
        let limit = LineRecord.limit
        return withUnsafeTemporaryAllocation(byteCount: limit + 1, alignment: 8) { buffer -> Lookup<T> in
            let count = get(buffer.baseAddress!, limit + 1)
            if count < 0 && (errno == ENODATA || errno == ENOTSUP) { return .absent }
            guard count > 0, count <= limit, let value = decode(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            else { return .damaged }
            return .found(value)
        }
    }

    /// The whole record in the sidecar of the entry file at `path` (relative to
    /// `directory`, or absolute), with its size; nil when missing or malformed.
    static func sidecar(_ path: String, relativeTo directory: Int32 = AT_FDCWD) -> (entry: CacheEntry, bytes: Int)? {
        LineRecord.read(path + sidecarSuffix, relativeTo: directory) { record, _ in
            CacheEntry(metadata: record, accessedAt: Date(timeIntervalSince1970: 0)).map { ($0, record.count) }
        }
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

    /// Creates `directory` when it does not exist (shard folders appear on first use;
    /// `clean` may remove empty ones).
    ///
    /// - Parameter unnamed: try `O_TMPFILE` first; false goes straight to a temporary name.
    init(in directory: String, unnamed: Bool = true) throws(FetchFailure) {
        self.directory = directory
        // Runs `create`, and once more after making the directory when it was missing.
        func inDirectory(_ create: () -> Int32) throws(FetchFailure) -> Int32 {
            let fd = create()
            guard fd < 0, errno == ENOENT else { return fd }
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw FetchFailure(.io, "cannot create \(directory): \(errnoText())")
            }
            return create()
        }
        var fd: Int32 = -1
        if unnamed {
            fd = try inDirectory { open(directory, O_WRONLY | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644) }
        }
        // EOPNOTSUPP, EISDIR or EINVAL: no O_TMPFILE here (NFS, old kernels), use a name.
        let failure = fd < 0 ? errno : 0
        if !unnamed || (fd < 0 && ![ENOENT, EACCES, ENOSPC, EROFS].contains(failure)) {
            let path = "\(directory)/\(getpid())-\(UInt64.random(in: 0...UInt64.max))\(EntryFile.temporarySuffix)"
            fd = try inDirectory { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
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

    /// Names the file `path` if nothing has that name yet. False when the name is taken, or
    /// when a named temporary cannot be hard-linked (FAT has no hard links): the caller then
    /// uses ``replace(at:)``. Throws on other failures. After success the file is no longer
    /// temporary.
    func linkIfAbsent(at path: String) throws(FetchFailure) -> Bool {
        if let temporaryPath {
            guard link(temporaryPath, path) == 0 else { return false }
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
