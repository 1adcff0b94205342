import FoundationEssentials
import Glibc

/// An advisory `flock` on one file under `<cache>/locks/`, held for a short critical section.
///
/// ## How processes share one cache directory
/// - **Readers never lock.** An entry file is visible exactly when it has its name, and it
///   gets its name whole (``NewEntryFile``: `linkat` of an unnamed file, or `rename`), after
///   its index line was appended (``CacheIndex``), so a reader sees a whole old entry, a
///   whole new one, or nothing; a file that does not match its line is never served.
/// - **Writers of a new entry do not lock either**: `linkat` fails rather than replace.
///   Replacing an existing entry (a re-fetch of a stale one, or losing a race to store the
///   same key) renames and appends its index line again under the bucket's lock (`locks/ab`),
///   so the last line always describes the file in place, and the rename cannot fall
///   between `clean`'s check of the old file and its unlink.
/// - **`clean`, `verify` and the end-of-run trim** hold `locks/maintenance` for their whole
///   run and take a bucket's lock only while deleting a small batch or compacting its
///   bucket. Under the lock each victim is checked again (same inode and size as scanned).
/// - `flock` locks belong to an open file description, so each acquisition opens its own
///   descriptor: threads of one process exclude each other as separate processes do. A lock
///   file that cannot be opened (read-only cache, a planted non-file) degrades to no
///   locking; the guarded writes then fail on their own and report `io`.
struct DirectoryLock: Sendable {
    /// The `locks/` folder's descriptor (held by the cache).
    let folder: Int32
    let name: String

    /// Runs `body` while holding the lock exclusively, waiting for it as long as it takes:
    /// call it off the cooperative pool (another process may hold it for a while).
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let fd = SafeOpen.file(name, in: folder, flags: O_RDWR | O_CREAT)
        if fd < 0 { return try body() }
        defer { close(fd) }  // closing the descriptor releases the lock
        // A lock that cannot be taken (ENOLCK) is a lock not held: the writes stay atomic on their own.
        _ = try? syscall(where: "flock") { flock(fd, LOCK_EX) }
        return try body()
    }

    /// Runs `body` while holding the lock when it is free now (`LOCK_NB`); nil, without
    /// running `body`, when another holder has it. For callers on the cooperative pool,
    /// which then take the wait to a ``BlockingPool`` thread: free is the common case.
    func withLockIfFree<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        let fd = SafeOpen.file(name, in: folder, flags: O_RDWR | O_CREAT)
        if fd < 0 { return try body() }
        defer { close(fd) }
        do throws(SystemCallError) {
            _ = try syscall(where: "flock") { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            if error.errno == EWOULDBLOCK { return nil }
        }
        return try body()
    }
}

extension DiskCache {
    /// Entries deleted per bucket-lock hold by `clean` and the trim: small enough that a
    /// storing fetch waits a few milliseconds at most (an unlink is about 10 µs here), large
    /// enough that taking the lock (open, flock, close) is not what a big `clean` spends.
    static let removalBatch = 256

    /// The lock serialising renames, removals and compaction in bucket `index`.
    func bucketLock(_ index: Int) -> DirectoryLock {
        DirectoryLock(folder: locks.value, name: Buckets.name(index))
    }

    /// Held for a whole `clean`, `verify` or trim, so only one runs at a time per directory.
    var maintenanceLock: DirectoryLock {
        DirectoryLock(folder: locks.value, name: "maintenance")
    }
}
