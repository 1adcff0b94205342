internal import CSDFetchShims
import Crypto
import FoundationEssentials
import Glibc

/// An entry file (`entries/ab/<digest>`): exactly the image bytes, nothing else, so `path`
/// and `--link` hand out the image itself.
///
/// Its mtime is the entry's *stamp*: set in whole seconds when the file is written and
/// never moved afterwards (uses are recorded in the index, not on the file). Anything that
/// writes the file moves its mtime, so a hit checks size and stamp with one `fstatat` and
/// never serves an edited, truncated or replaced file. A copy that did not keep mtimes
/// (`cp -r`) fails that check once: the file is then hashed against the recorded SHA-256,
/// and a match restores the stamp.
enum EntryFile {
    /// What one `fstatat` says about an entry file against its record.
    enum Check: Equatable {
        /// Size and stamp match: served without reading a byte.
        case intact
        /// Same size, another mtime (a copy that did not keep mtimes, or an edit): hash it.
        case unstamped
        /// Missing, not a regular file, or another size: not this entry.
        case changed
    }

    static func check(_ entry: CacheEntry, name: String, in shard: Int32) -> Check {
        var info = stat()
        guard fstatat(shard, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            Int64(info.st_size) == entry.bytes
        else { return .changed }
        return Int64(info.st_mtim.tv_sec) == entry.stamp && info.st_mtim.tv_nsec == 0 ? .intact : .unstamped
    }

    /// Whether the file's bytes still hash to the record's SHA-256; if so its stamp is set
    /// again, so the next hit is a plain ``check(_:name:in:)``.
    static func rehash(_ entry: CacheEntry, name: String, in shard: Int32) -> Bool {
        let fd = SafeOpen.file(name, in: shard, flags: O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let digest = sha256(of: fd, expecting: entry.bytes), digest == entry.sha256 else { return false }
        setStamp(fd, entry.stamp)
        return true
    }

    /// SHA-256 of the whole open file in hex; nil when it cannot be read or its size is not
    /// `expecting` (when given).
    static func sha256(of fd: Int32, expecting size: Int64? = nil) -> String? {
        var hasher = SHA256()
        var total: Int64 = 0
        let ok = withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 16) { buffer -> Bool in
            while true {
                guard let count = try? syscall(where: "pread", { pread(fd, buffer.baseAddress, buffer.count, off_t(total)) })
                else { return false }
                if count == 0 { return true }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                total += Int64(count)
                if let size, total > size { return false }
            }
        }
        guard ok, size == nil || total == size else { return nil }
        return hex(hasher.finalize())
    }

    static func sha256(of bytes: UnsafeRawBufferPointer) -> String {
        hex(SHA256.hash(data: bytes))
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        String(unsafeUninitializedCapacity: 64) { out in
            var index = 0
            digest.withUnsafeBytes { raw in
                for byte in raw {
                    out[index] = hexDigit(byte >> 4)
                    out[index + 1] = hexDigit(byte & 0xF)
                    index += 2
                }
            }
            return 64
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The stamp for a file written at `date`: whole seconds, which every archive format keeps.
    static func stamp(for date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// Sets the open file's mtime to `stamp` seconds (nanoseconds 0), its atime to now.
    /// Best effort: explicit times need the file's owner; a file without its stamp is only
    /// hashed again on its next hit.
    static func setStamp(_ fd: Int32, _ stamp: Int64) {
        var times = [FileTime.omitted, timespec(tv_sec: Int(stamp), tv_nsec: 0)]
        _ = futimens(fd, &times)
    }
}

/// A cache entry file being written: created unnamed (`O_TMPFILE`) in its shard folder,
/// filled and stamped, then named in one step, so the entry appears whole or not at all and
/// a crash leaves nothing behind.
///
/// Where `O_TMPFILE` is unsupported, the file is created under a temporary name in the same
/// folder and renamed instead; `clean` removes such files once they are an hour old.
/// Closing (and removing any temporary name) happens in `deinit`, so every failure path
/// cleans up.
final class NewEntryFile {
    let fd: Int32
    /// The shard folder's descriptor (held by the cache's ``ShardFolders``).
    let folder: Int32
    /// The temporary name when the file was created with one; nil for an unnamed file.
    private(set) var temporaryName: String?

    /// - Parameter unnamed: try `O_TMPFILE` first; false goes straight to a temporary name.
    init(in folder: Int32, unnamed: Bool = true) throws(FetchFailure) {
        self.folder = folder
        var fd: Int32 = -1
        if unnamed {
            fd = openat(folder, ".", O_WRONLY | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644)
        }
        // EOPNOTSUPP, EISDIR or EINVAL: no O_TMPFILE here (NFS, old kernels), use a name.
        if fd < 0 && (!unnamed || ![EACCES, ENOSPC, EROFS].contains(errno)) {
            let name = FileIO.temporaryName()
            fd = openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 { temporaryName = name }
        }
        guard fd >= 0 else { throw FetchFailure(.io, "cannot create a cache file: \(errnoText())") }
        self.fd = fd
    }

    /// Takes over a download's unnamed spill file (a duplicate of its descriptor), which
    /// already holds the bytes: nil when it lives on another file system than `folder`
    /// (a `tmp/` that is a mount of its own), where it could not be linked.
    init?(adopting body: SpilledBody, in folder: Int32) {
        var file = stat()
        var directory = stat()
        guard fstat(body.fd, &file) == 0, fstat(folder, &directory) == 0, file.st_dev == directory.st_dev,
            Int64(file.st_size) == body.count
        else { return nil }
        let fd = dup(body.fd)
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.folder = folder
    }

    deinit {
        close(fd)
        if let temporaryName { unlinkat(folder, temporaryName, 0) }
    }

    /// Writes all of `bytes` (a failed write, such as a full disk, throws).
    func write(_ bytes: UnsafeRawBufferPointer) throws(FetchFailure) {
        guard FileIO.writeAll(bytes, to: fd) else {
            throw FetchFailure(.io, "cannot write a cache file: \(errnoText())")
        }
    }

    /// Names the file `name` if nothing has that name yet. False when the name is taken, or
    /// when a named temporary cannot be hard-linked (FAT has no hard links): the caller then
    /// uses ``replace(_:)``. Throws on other failures.
    func linkIfAbsent(as name: String) throws(FetchFailure) -> Bool {
        if let temporaryName {
            guard linkat(folder, temporaryName, folder, name, 0) == 0 else { return false }
            unlinkat(folder, temporaryName, 0)
            self.temporaryName = nil
            return true
        }
        guard linkUnnamed(as: name) else {
            if errno == EEXIST { return false }
            throw FetchFailure(.io, "cannot name a cache file: \(errnoText())")
        }
        return true
    }

    /// Names the file `name`, atomically replacing whatever had that name.
    func replace(_ name: String) throws(FetchFailure) {
        if temporaryName == nil {
            // An unnamed file cannot be renamed: give it a temporary name first.
            let named = FileIO.temporaryName()
            guard linkUnnamed(as: named) else { throw FetchFailure(.io, "cannot name a cache file: \(errnoText())") }
            temporaryName = named
        }
        guard let temporaryName, renameat(folder, temporaryName, folder, name) == 0 else {
            throw FetchFailure(.io, "cannot rename a cache file: \(errnoText())")
        }
        self.temporaryName = nil
    }

    private func linkUnnamed(as name: String) -> Bool {
        UnnamedFileLink.link(fd, as: name, in: folder)
    }
}
