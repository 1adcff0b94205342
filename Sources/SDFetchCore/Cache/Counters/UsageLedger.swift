import Synchronization

/// What this process changed in each bucket since it last reported to the bucket's
/// counters (``BucketUsage``, <doc:OnDiskFormat#Counters-and-trimming>): the index bytes it
/// appended to one index file, and the entries and bytes its stores added.
///
/// Thread-safe: each bucket's pending change sits behind the one `Mutex`; it is touched
/// once per store and once per written batch of uses.
final class UsageLedger: Sendable {
    struct Pending: Sendable {
        /// The index file the appends went to; appends to another file start over.
        var inode: UInt64 = 0
        var appended: Int64 = 0
        var entries = 0
        var bytes: Int64 = 0
        /// The earliest last use among the entries stored (ns), 0 for none.
        var oldest: Int64 = 0
        /// The stored times of the entries stored or renewed (see ``BucketUsage/storedFrom``).
        var stored = BucketUsage()
        /// An append went to a file other than the one counted: these counters cannot be
        /// brought up to date by this process.
        var isLost = false

        var isEmpty: Bool { appended == 0 && entries == 0 && bytes == 0 && !isLost }
    }

    private let pending = Mutex([Pending](repeating: Pending(), count: Buckets.count))

    /// Notes `count` bytes appended to bucket `bucket`'s index file `inode`.
    func appended(_ bucket: Int, inode: UInt64, count: Int) {
        pending.withLock { all in
            if all[bucket].inode != inode {
                // Another file (a compaction replaced it): what was noted for the old one is
                // void. (No file yet: a store's change, noted before its first append.)
                if all[bucket].inode != 0 && !all[bucket].isEmpty { all[bucket] = Pending(isLost: true) }
                all[bucket].inode = inode
            }
            all[bucket].appended += Int64(count)
        }
    }

    /// Notes that a store changed bucket `bucket` by `entries` entries and `bytes` bytes;
    /// `usedAt` and `storedAt` are the stored entry's last use and stored time (0: no entry
    /// stored, a change taken back).
    func changed(_ bucket: Int, entries: Int, bytes: Int64, usedAt: Int64, storedAt: Int64 = 0) {
        pending.withLock { all in
            all[bucket].entries += entries
            all[bucket].bytes += bytes
            all[bucket].stored.widen(storedAt: storedAt)
            if entries > 0 { all[bucket].oldest = all[bucket].oldest == 0 ? usedAt : min(all[bucket].oldest, usedAt) }
        }
    }

    /// Hands over and clears bucket `bucket`'s pending change, nil when it has none.
    func take(_ bucket: Int) -> Pending? {
        pending.withLock { all in
            guard !all[bucket].isEmpty else { return nil }
            defer { all[bucket] = Pending() }
            return all[bucket]
        }
    }

    /// Hands over and clears the pending changes of every bucket that has some.
    func take() -> [(bucket: Int, pending: Pending)] {
        pending.withLock { all in
            var taken: [(bucket: Int, pending: Pending)] = []
            for bucket in all.indices where !all[bucket].isEmpty {
                taken.append((bucket, all[bucket]))
                all[bucket] = Pending()
            }
            return taken
        }
    }
}
