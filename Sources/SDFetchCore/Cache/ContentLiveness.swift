import FoundationEssentials
import Glibc

/// Which content files (``ContentFile``) still have an entry, as `clean` judges it from its
/// sweep rather than from link counts alone.
///
/// A link count says how many names an inode has anywhere on the file system, not how many
/// entries: an `-o --link` output is one more hard link, so a content file whose entries are
/// all gone still counts 2 and would stay for good. `clean` knows every entry file's inode
/// from its sweep, so a content file is dead when its inode is no kept entry's and nothing
/// linked or unlinked it since the sweep began (its ctime is older), or when it was the file
/// of an entry this `clean` removed (that unlink moved its ctime). A store that links a
/// content file after the sweep moves its ctime and keeps it; one caught between the sweep
/// and the removal loses only the sharing (<doc:OnDiskFormat#Identical-bytes>).
struct ContentLiveness: Sendable {
    /// Inodes of the entry files kept (live or too young to judge).
    let kept: Set<UInt64>
    /// Inodes of the entry files this `clean` removed.
    let removed: Set<UInt64>
    /// When the sweep began, ns since 1970 on the kernel's clock, less a second of margin
    /// for the file system's coarse timestamps.
    let sweepStart: Int64

    /// The real time now, less the margin: call before the sweep.
    static func sweepStartNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return FileTime.nanoseconds(now) - 1_000_000_000
    }

    /// Whether the content file `info` describes has no entry left.
    func isDead(_ info: stat) -> Bool {
        let inode = UInt64(info.st_ino)
        guard !kept.contains(inode) else { return false }
        return removed.contains(inode) || FileTime.nanoseconds(info.st_ctim) < sweepStart
    }
}
