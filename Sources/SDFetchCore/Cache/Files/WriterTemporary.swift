import FoundationEssentials
import Glibc

/// A named temporary file in the cache, and how `clean` tells a live writer's from one a
/// killed writer left behind.
///
/// Most writes are unnamed (`O_TMPFILE`) and leave nothing when their process dies; the
/// others (a file system without `O_TMPFILE`, failure records, index compaction, the rename
/// that replaces an entry) hold a temporary name for a moment. Each writer holds an
/// advisory lock (`flock`) on its temporary while the name exists; the kernel drops it when
/// the process dies, however it dies. `clean` removes a temporary at once when it can take
/// that lock and the file has not changed for ``CacheWaits/writerGrace`` (the moment
/// between a file's creation and its lock), and any temporary after ``DiskCache/strayTemporaryAge`` as
/// before (a lock it cannot judge: another user's file, a file system whose `flock` needs a
/// write descriptor, as NFS's emulation does).
enum WriterTemporary {
    /// Creates the temporary `name` in `folder` (`O_EXCL`) and locks it; -1 (errno set) when
    /// it cannot be created.
    static func create(_ name: String, in folder: Int32, flags: Int32, mode: mode_t = 0o644) -> Int32 {
        let fd = SafeOpen.file(name, in: folder, flags: flags | O_CREAT | O_EXCL, mode: mode)
        if fd >= 0 { hold(fd) }
        return fd
    }

    /// Locks the open file as being written, for as long as `fd` stays open; call before it
    /// gets a temporary name. Never waits: a file already locked (an inode several writers
    /// share) is held by the other writer, which is as good.
    static func hold(_ fd: Int32) {
        if flock(fd, LOCK_EX | LOCK_NB) != 0 { _ = flock(fd, LOCK_SH | LOCK_NB) }
    }

    /// Whether the temporary `file` in `folder` belongs to no live writer: last modified
    /// before `limit` (ns since 1970, the hour of ``DiskCache/strayTemporaryAge``), or still
    /// the file scanned, with no process holding its lock, unchanged for `grace`.
    static func isAbandoned(_ file: ScannedFile, in folder: Int32, orBefore limit: Int64, grace: Duration) -> Bool {
        guard file.modifiedAt >= limit else { return true }
        guard folder >= 0 else { return false }
        let fd = SafeOpen.file(file.name, in: folder, flags: O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_ino) == file.inode, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            return false
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return FileTime.nanoseconds(info.st_ctim) < FileTime.nanoseconds(now) - Freshness.nanoseconds(grace)
    }
}
