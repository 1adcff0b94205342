internal import CSDFetchShims
import FoundationEssentials
import Glibc
import Synchronization

/// Opening files inside the cache without trusting it
/// (<doc:Security#The-cache-directory-is-untrusted>: nothing in the cache directory is
/// trusted). Every open is relative to a held directory descriptor and refuses links
/// (`O_NOFOLLOW`); files are opened `O_NONBLOCK` and checked to be regular, so a FIFO or
/// device planted at an entry's name is skipped at once instead of blocking `open`.
enum SafeOpen {
    /// The directory `name` under `parent`, never through a link; created first when
    /// `create` is set and it is missing. -1 (errno set) when it is anything but a directory.
    static func directory(_ name: String, in parent: Int32, create: Bool) -> Int32 {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var fd = openat(parent, name, flags)
        if fd < 0 && errno == ENOENT && create {
            if mkdirat(parent, name, 0o755) != 0 && errno != EEXIST { return -1 }
            fd = openat(parent, name, flags)
        }
        return fd
    }

    /// The regular file `name` under `directory` with `flags`, never through a link and never
    /// blocking; -1 (errno `ELOOP`, `EINVAL` or the open's own) for anything else.
    static func file(_ name: String, in directory: Int32, flags: Int32, mode: mode_t = 0o644) -> Int32 {
        let fd = openat(directory, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard fd >= 0 else { return -1 }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            errno = EINVAL
            return -1
        }
        return fd
    }

    /// ``file(_:in:flags:mode:)`` for reading, without updating the file's access time when
    /// this process owns it: a warm run reads its buckets' index files by the thousand, and
    /// the kernel weighs an atime update on every read.
    static func reading(_ name: String, in directory: Int32) -> Int32 {
        let fd = file(name, in: directory, flags: O_RDONLY | CSDFetch_O_NOATIME())
        return fd < 0 && errno == EPERM ? file(name, in: directory, flags: O_RDONLY) : fd
    }

    /// Most bytes a read of cache metadata takes (64 MiB, some 400,000 index lines for one
    /// shard): a forged or sparse file of any size never sizes an allocation past this.
    static let maxReadBytes = 64 << 20

    /// Reads all of the open file `fd` from `offset` to its end, at most `limit` bytes.
    /// `size` is the file's size when the caller just took it (one `fstat` fewer).
    static func readAll(_ fd: Int32, from offset: Int = 0, limit: Int = maxReadBytes, size: Int? = nil) -> [UInt8]? {
        var info = stat()
        let size = size ?? (fstat(fd, &info) == 0 ? Int(info.st_size) : 0)
        let expected = max(0, min(limit, size - offset))
        // The size `fstat` gives, read straight into the array; what a writer appended since
        // then, in chunks.
        var failed = false
        var bytes = [UInt8](unsafeUninitializedCapacity: expected) { buffer, initialized in
            while initialized < expected {
                let count = pread(
                    fd, buffer.baseAddress! + initialized, expected - initialized, off_t(offset + initialized))
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failed = true }
                guard count > 0 else { break }
                initialized += count
            }
        }
        guard !failed else { return nil }
        if bytes.count < expected { return bytes }
        var position = offset + bytes.count
        let chunkSize = 1 << 16
        // An uninitialised chunk: zeroing 64 KiB per read cost more than reading a bucket.
        let isComplete = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunkSize) { chunk in
            while bytes.count < limit {
                let wanted = min(chunkSize, limit - bytes.count)
                guard
                    let count = try? syscall(where: "pread", { pread(fd, chunk.baseAddress, wanted, off_t(position)) })
                else { return false }
                if count == 0 { break }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[..<count]))
                position += count
            }
            return true
        }
        return isComplete ? bytes : nil
    }
}
