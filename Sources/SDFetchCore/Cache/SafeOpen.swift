import FoundationEssentials
import Glibc
import Synchronization

/// Opening files inside the cache without trusting it (SPEC "Security": nothing in the cache
/// directory is trusted). Every open is relative to a held directory descriptor and refuses
/// links (`O_NOFOLLOW`); files are opened `O_NONBLOCK` and checked to be regular, so a FIFO
/// or device planted at an entry's name is skipped at once instead of blocking `open`.
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

    /// Reads all of the open file `fd` from `offset` to its end, at most `limit` bytes.
    static func readAll(_ fd: Int32, from offset: Int = 0, limit: Int = Int.max) -> [UInt8]? {
        var bytes: [UInt8] = []
        var info = stat()
        if fstat(fd, &info) == 0 { bytes.reserveCapacity(max(0, min(limit, Int(info.st_size) - offset))) }
        var position = offset
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

/// The 256 shard folders (`ab`) under one cache folder, entered only as real directories
/// (never through a link) and each operation resolving one name relative to its shard's
/// descriptor.
///
/// With `holds`, a folder's descriptor is opened on first use and kept (the warm-run hit
/// then costs one `fstatat`); without, each use opens and closes it, so a process under a
/// small open-file limit (`ulimit -n`) does not spend up to 256 descriptors on folders.
final class ShardFolders: Sendable {
    let parent: DirectoryDescriptor
    let holds: Bool
    private let descriptors = Mutex<[Int32]>(Array(repeating: -1, count: 256))

    init(parent: DirectoryDescriptor, holds: Bool) {
        self.parent = parent
        self.holds = holds
    }

    deinit {
        descriptors.withLock { for fd in $0 where fd >= 0 { close(fd) } }
    }

    /// Runs `body` with the descriptor of shard `index` (created first when `create` is set);
    /// -1 when it is missing (and not created) or is not a real directory. The descriptor is
    /// valid only inside `body`.
    func with<T, E: Error>(_ index: Int, create: Bool, _ body: (Int32) throws(E) -> T) throws(E) -> T {
        guard holds else {
            let fd = SafeOpen.directory(Shards.name(index), in: parent.value, create: create)
            defer { if fd >= 0 { close(fd) } }
            return try body(fd)
        }
        let fd = descriptors.withLock { fds in
            if fds[index] >= 0 { return fds[index] }
            let fd = SafeOpen.directory(Shards.name(index), in: parent.value, create: create)
            if fd >= 0 { fds[index] = fd }  // a missing folder may appear later
            return fd
        }
        return try body(fd)
    }

    /// Whether folders should be held under the current open-file limit: only when 256 of
    /// them are a small share of it.
    static var limitAllowsHolding: Bool {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        return limit.rlim_cur >= 8192
    }
}

/// Shard numbering: the first byte of a key's digest picks one of 256 folders and buckets.
enum Shards {
    static let count = 256

    static func index(of digest: KeyDigest) -> Int { Int(digest.high >> 56) }

    private static let names: [String] = (0..<256).map { index in
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[index >> 4], digits[index & 0xF]], as: UTF8.self)
    }

    /// Two lower-case hex digits.
    static func name(_ index: Int) -> String { names[index] }

    /// The shard number of a two-hex-digit name, or nil.
    static func index(named name: String) -> Int? {
        guard name.utf8.count == 2, let value = UInt8(name, radix: 16), name == names[Int(value)] else { return nil }
        return Int(value)
    }
}
