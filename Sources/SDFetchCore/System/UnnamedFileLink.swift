internal import CSDFetchShims
import FoundationEssentials
import Glibc
import Synchronization

/// Gives an unnamed file (`O_TMPFILE`) a name: the last step of every cache entry and every
/// `-o` copy.
///
/// `linkat(fd, "", ..., AT_EMPTY_PATH)` names the descriptor itself. Linux allows it only to
/// callers with `CAP_DAC_READ_SEARCH` (root here and in most CI containers); everyone else
/// goes through `/proc/self/fd/N`, a magic link that costs a walk through procfs on every
/// call (half of a cold run's `linkat` time on tmpfs). The first refusal is remembered, so
/// an unprivileged run asks once.
package enum UnnamedFileLink {
    private static let isEmptyPathRefused = Atomic<Bool>(false)

    /// Links `fd` as `name` in `folder`; false with `errno` set when it cannot (the name is
    /// taken: `EEXIST`).
    package static func link(_ fd: Int32, as name: String, in folder: Int32) -> Bool {
        if !isEmptyPathRefused.load(ordering: .relaxed) {
            if linkat(fd, "", folder, name, CSDFetch_AT_EMPTY_PATH()) == 0 { return true }
            guard errno == EPERM || errno == ENOENT || errno == EINVAL else { return false }
            isEmptyPathRefused.store(true, ordering: .relaxed)
        }
        return linkThroughProc(fd, as: name, in: folder)
    }

    /// The unprivileged way, through the descriptor's magic link in `/proc/self/fd`.
    static func linkThroughProc(_ fd: Int32, as name: String, in folder: Int32) -> Bool {
        linkat(AT_FDCWD, "/proc/self/fd/\(fd)", folder, name, AT_SYMLINK_FOLLOW) == 0
    }
}
