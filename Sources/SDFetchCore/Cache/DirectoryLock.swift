import Foundation

/// An advisory `flock` on one file under `<cache>/locks/`, held for a short critical section.
///
/// ## How processes share one cache directory
/// - **Readers never lock.** An entry is visible exactly when its file has its name, and
///   a file gets its name whole, metadata included (``NewEntryFile``: `linkat` of an
///   unnamed file, or `rename`), so a reader sees a whole old entry, a whole new one, or
///   nothing. A sidecar (no extended attributes) is written before its body is named.
/// - **Writers of a new entry do not lock either**: `linkat` fails rather than replace,
///   and nothing else can name that file meanwhile. Replacing an existing entry (a re-fetch
///   of a stale one) renames under the shard's lock (`locks/ab`, one per first digest
///   byte), so it cannot fall between `clean`'s check of the old file and its unlink.
/// - **`clean` and `enforceLimit`** hold `locks/maintenance` for their whole run (so two
///   cleans never race over the same files) and take a shard's lock only while deleting a
///   small batch (``DiskCache/removalBatch`` entries). Under the lock each victim is
///   checked again (same inode and access time as scanned), so an entry replaced or hit
///   since the scan survives. A replacing store therefore waits at most one batch's
///   unlinks, and `clean` never waits for a fetch run.
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
