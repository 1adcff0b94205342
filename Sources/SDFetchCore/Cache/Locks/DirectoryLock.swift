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
///   between `clean`'s check of the old file and its unlink. A fetch waits for that lock
///   at most ``CacheWaits/bucketLock`` (``withLock(waitingAtMost:_:)``), then goes on
///   without it.
/// - **`clean`, `verify` and `merge`** hold `locks/maintenance` for their whole run, which
///   orders them among themselves, and take a bucket's lock only while deleting a small
///   batch or compacting its bucket. Under the lock each victim is checked again (same
///   inode and size as scanned). The end-of-run trim only tries the maintenance lock: no
///   fetch waits for maintenance (<doc:OnDiskFormat#Locks>).
/// - `flock` locks belong to an open file description, so each acquisition opens its own
///   descriptor: threads of one process exclude each other as separate processes do. A lock
///   file that cannot be opened (read-only cache, a planted non-file, another user's file
///   mode 0600) degrades to no locking; the guarded writes then fail on their own and
///   report `io`.
/// - Lock files are created mode 0600: `flock` needs only a descriptor, and any user who
///   could open one could stop every writer of the cache.
struct DirectoryLock: Sendable {
    /// The `locks/` folder's descriptor (held by the cache).
    let folder: Int32
    let name: String

    /// Runs `body` while holding the lock exclusively, waiting for it as long as it takes:
    /// for maintenance, off the cooperative pool (another process may hold it for a while).
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let fd = open()
        if fd < 0 { return try body() }
        defer { close(fd) }  // closing the descriptor releases the lock
        // A lock that cannot be taken (ENOLCK) is a lock not held: the writes stay atomic on their own.
        _ = try? syscall(where: "flock") { flock(fd, LOCK_EX) }
        return try body()
    }

    /// Runs `body` holding the lock when it can be had within `limit`, and without it
    /// after that: for fetches, which never wait on a stuck holder.
    func withLock<T, E: Error>(waitingAtMost limit: Duration, _ body: () throws(E) -> T) throws(E) -> T {
        if let result = try withLock(within: limit, body) { return result }
        return try body()
    }

    /// Runs `body` holding the lock when it can be had within `limit`; nil, without running
    /// `body`, when another holder kept it all that time. Polls rather than blocks, so a
    /// holder stopped with `SIGSTOP` costs `limit`, no more.
    func withLock<T, E: Error>(within limit: Duration, _ body: () throws(E) -> T) throws(E) -> T? {
        let fd = open()
        if fd < 0 { return try body() }
        defer { close(fd) }
        let deadline = ContinuousClock.now.advanced(by: limit)
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            // A lock that cannot be taken (ENOLCK) is a lock not held, as in withLock(_:).
            guard errno == EWOULDBLOCK || errno == EINTR else { break }
            guard ContinuousClock.now < deadline else { return nil }
            nanosleep(&pause, nil)
            pause.tv_nsec = min(pause.tv_nsec * 2, 20_000_000)
        }
        return try body()
    }

    /// Runs `body` while holding the lock when it is free now (`LOCK_NB`); nil, without
    /// running `body`, when another holder has it. For callers on the cooperative pool,
    /// which then take the wait to a ``BlockingPool`` thread, and for work that can be
    /// left for later (the trim, a compaction): free is the common case.
    func withLockIfFree<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        let fd = open()
        if fd < 0 { return try body() }
        defer { close(fd) }
        do throws(SystemCallError) {
            _ = try syscall(where: "flock") { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            if error.errno == EWOULDBLOCK { return nil }
        }
        return try body()
    }

    /// The lock file, created 0600; one of an earlier build (0644) is narrowed when this
    /// user owns it. -1 when it cannot be opened.
    private func open() -> Int32 {
        let fd = SafeOpen.file(name, in: folder, flags: O_RDWR | O_CREAT, mode: 0o600)
        guard fd >= 0 else { return -1 }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0, info.st_uid == geteuid() { _ = fchmod(fd, 0o600) }
        return fd
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

    /// Held for a whole `clean`, `verify` or `merge`, so only one runs at a time per
    /// directory; the end-of-run trim only tries it.
    var maintenanceLock: DirectoryLock {
        DirectoryLock(folder: locks.value, name: "maintenance")
    }
}
