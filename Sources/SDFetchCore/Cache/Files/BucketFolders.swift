import FoundationEssentials
import Glibc
import Synchronization

/// The 256 bucket folders (`ab`) under one cache folder, entered only as real directories
/// (never through a link) and each operation resolving one name relative to its bucket's
/// descriptor.
///
/// With `holds`, a folder's descriptor is opened on first use and kept (the warm-run hit
/// then costs one `fstatat`); without, each use opens and closes it, so a process under a
/// small open-file limit (`ulimit -n`) does not spend up to 256 descriptors on folders.
final class BucketFolders: Sendable {
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

    /// Runs `body` with the descriptor of bucket `index` (created first when `create` is set);
    /// -1 when it is missing (and not created) or is not a real directory. The descriptor is
    /// valid only inside `body`.
    func with<T, E: Error>(_ index: Int, create: Bool, _ body: (Int32) throws(E) -> T) throws(E) -> T {
        guard holds else {
            let fd = SafeOpen.directory(Buckets.name(index), in: parent.value, create: create)
            defer { if fd >= 0 { close(fd) } }
            return try body(fd)
        }
        let fd = descriptors.withLock { fds in
            if fds[index] >= 0 { return fds[index] }
            let fd = SafeOpen.directory(Buckets.name(index), in: parent.value, create: create)
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
