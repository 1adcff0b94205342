import Foundation

/// An advisory `flock` on one file under `<cache>/locks/`, held for a short critical section.
///
/// ## How processes share one cache directory
/// - **Readers never lock.** An entry is visible exactly when its `.meta` file exists, and
///   every file appears by `rename(2)` from `tmp/` (same file system), so a reader sees a
///   whole old file, a whole new file, or nothing. The body is renamed into place before
///   its metadata, so a visible `.meta` describes a complete body.
/// - **Writers of one shard serialise their renames.** A store writes both temporary files
///   first (the slow part, unlocked), then takes the shard's lock (`locks/ab`, one per
///   first digest byte) only for: unlink old `.meta`, rename body, rename `.meta`. Without
///   it two processes storing one key could interleave and leave A's metadata on B's body.
///   Unlinking the old `.meta` first means a `kill -9` between the renames leaves a body
///   without metadata (a miss that `clean` removes), never a mismatched pair.
/// - **`clean` and `enforceLimit`** hold `locks/maintenance` for their whole run (so two
///   cleans never race over the same files) and take a shard's lock only while deleting a
///   small batch (``DiskCache/removalBatch`` entries). Under the lock each victim is
///   checked again (same `.meta` inode and access time as scanned), so an entry stored or
///   hit since the scan survives. A fetch therefore waits at most one batch's unlinks, and
///   `clean` never waits for a fetch run, whose locks last a few renames.
/// - Lock holders block in `flock(2)`; the sections are microseconds to a few
///   milliseconds long, so this is done inline rather than on a dedicated thread.
/// - `flock` locks belong to an open file description, so each acquisition opens its own
///   descriptor: threads of one process exclude each other as separate processes do.
///   A lock file that cannot be opened (read-only cache) degrades to no locking; the
///   guarded writes then fail on their own and report `io`.
struct DirectoryLock: Sendable {
    let path: String

    /// Runs `body` while holding the lock exclusively.
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { return try body() }
        defer { close(fd) }  // closing the descriptor releases the lock
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return try body()
    }
}

extension DiskCache {
    /// Entries deleted per shard-lock hold by `clean` and `enforceLimit`: small enough that a
    /// storing fetch waits well under a millisecond or two.
    static let removalBatch = 64

    /// The lock serialising renames and removals in the shard holding `digestHex`.
    func shardLock(_ shard: String) -> DirectoryLock {
        DirectoryLock(path: "\(locksDirectory)/\(shard)")
    }

    /// Held for a whole `clean` or `enforceLimit`, so only one runs at a time per directory.
    var maintenanceLock: DirectoryLock {
        DirectoryLock(path: "\(locksDirectory)/maintenance")
    }
}
