internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// A cache entry file being written: created unnamed (`O_TMPFILE`) in its bucket folder,
/// filled and stamped, then named in one step, so the entry appears whole or not at all and
/// a crash leaves nothing behind.
///
/// Where `O_TMPFILE` is unsupported, the file is created under a temporary name in the same
/// folder and renamed instead, locked while named (``WriterTemporary``): `clean` removes
/// such a file once its writer is gone.
/// Closing (and removing any temporary name) happens in `deinit`, so every failure path
/// cleans up.
final class NewEntryFile {
    let fd: Int32
    /// The bucket folder's descriptor (held by the cache's ``BucketFolders``).
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
            fd = WriterTemporary.create(name, in: folder, flags: O_WRONLY)
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

    /// Writes the first `count` bytes of the file open as `source` (read with `pread`, its
    /// offset left alone); a short source or a failed write throws.
    func copy(from source: Int32, bytes count: Int64) throws(FetchFailure) {
        let chunk = 1 << 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < count {
            let read = pread(source, buffer.baseAddress, min(chunk, Int(count - offset)), off_t(offset))
            guard read > 0 else {
                throw FetchFailure(.io, "cannot copy a cache file: \(read == 0 ? "it ended early" : errnoText())")
            }
            try write(UnsafeRawBufferPointer(rebasing: buffer[..<read]))
            offset += Int64(read)
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

    /// Gives the file one more name, `name` in `other` (a folder on the same file system),
    /// leaving it as it was otherwise; false with `errno` set when it cannot (`EEXIST`: the
    /// name is taken).
    func link(as name: String, in other: Int32) -> Bool {
        if let temporaryName { return linkat(folder, temporaryName, other, name, 0) == 0 }
        return UnnamedFileLink.link(fd, as: name, in: other)
    }

    /// Names the file `name`, atomically replacing whatever had that name.
    func replace(_ name: String) throws(FetchFailure) {
        if temporaryName == nil {
            // An unnamed file cannot be renamed: give it a temporary name first.
            let named = FileIO.temporaryName()
            WriterTemporary.hold(fd)
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
