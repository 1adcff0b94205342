import FoundationEssentials
import Glibc

/// The LRU trim over the buckets' counters (<doc:OnDiskFormat#Counters-and-trimming>): the
/// end-of-run trim's and `clean --max-size`'s. It reads a bucket only when that bucket holds
/// the oldest entries left, so a trim touches the buckets of its victims and no others, and
/// holds one bucket's entries at a time.
extension DiskCache {
    /// How a trim deals with a bucket lock another process holds.
    enum LockWait {
        /// Maintenance: as long as it takes.
        case always
        /// A fetch's trim: ``CacheWaits/bucketLock`` at most, then that bucket is left.
        case bounded
    }

    /// Removes least recently used entries until `usages` (every bucket's counters, updated
    /// as it goes) add up to at most `maxBytes`; entries in `keys` only after all others.
    /// In a dry run nothing is removed, and the counters and report say what would go.
    /// `gone`: in a dry run, entries already counted as removed (`clean`'s expired ones).
    /// `removedInodes` gains the files of the entries removed (for ``ContentLiveness``).
    func trim(
        _ usages: inout [BucketUsage], to maxBytes: Int64, protecting keys: KeyDigestSet, dryRun: Bool,
        listing: Bool, wait: LockWait, gone: [Int: Set<KeyDigest>] = [:], removedInodes: inout Set<UInt64>,
        into report: inout CleanReport
    ) {
        func total() -> Int64 { usages.reduce(0) { $0 + $1.bytes } }
        // Each bucket's oldest last use among the entries it may still give up: the counters'
        // until it is read, Int64.max once it has none.
        var oldest = usages.map { $0.entries > 0 ? $0.oldest : Int64.max }
        var gone = gone
        var protected = [(entries: Int, bytes: Int64)](repeating: (0, 0), count: Buckets.count)
        var takesProtected = false
        var rounds = 2 * Buckets.count + usages.reduce(0) { $0 + $1.entries }
        while total() > maxBytes && rounds > 0 {
            rounds -= 1
            guard let bucket = oldest.indices.min(by: { oldest[$0] < oldest[$1] }), oldest[bucket] < Int64.max else {
                // Only the run's own entries are left: they go too, oldest first.
                if takesProtected { break }
                takesProtected = true
                oldest = usages.map { $0.entries > 0 ? $0.oldest : Int64.max }
                continue
            }
            oldest[bucket] = Int64.max
            let next = oldest.min() ?? Int64.max
            let swept = sweep(bucket)
            let live = swept.live.filter { gone[bucket]?.contains($0.digest) != true }
            // The bucket as its index says, not as its counters claimed: forged or stale
            // counters (<doc:Security>) move a trim's order at most, never its size. Every
            // bucket with entries is read before the run's own entries go, so they go only
            // when the recounted cache is still over.
            usages[bucket] = Self.usage(of: live, state: swept.countedState)
            protected[bucket] = live.filter { keys.contains($0.digest) }.reduce((0, 0)) { ($0.0 + 1, $0.1 + $1.bytes) }
            let candidates = live.filter { takesProtected || !keys.contains($0.digest) }.sorted {
                $0.accessedAt < $1.accessedAt
            }
            // Down to the next bucket's oldest (older entries elsewhere go first), and at
            // least this bucket's share of what must go: buckets fill side by side, so exact
            // global order would take one entry per visit. LRU within the bucket, then.
            let all = total()
            var over = all - maxBytes
            let share = Int64(Double(usages[bucket].bytes) * Double(over) / Double(max(all, 1)))
            var taken: Int64 = 0
            var victims: [SweptEntry] = []
            // Counters whose oldest use was older than the bucket's now (a use since) only
            // move the bucket back in the order.
            let isOldest = (candidates.first?.accessedAt ?? Int64.max) <= next
            for item in candidates where isOldest && over > 0 && (item.accessedAt <= next || taken < share) {
                victims.append(item)
                over -= item.bytes
                taken += item.bytes
            }
            oldest[bucket] = candidates.dropFirst(victims.count).first?.accessedAt ?? Int64.max
            guard !victims.isEmpty else { continue }
            report.removedProtectedEntries += victims.count(where: { keys.contains($0.digest) })
            if dryRun {
                gone[bucket, default: []].formUnion(victims.map(\.digest))
                usages[bucket] = Self.usage(of: live.filter { gone[bucket]?.contains($0.digest) != true }, state: nil)
                report.removedEntries += victims.count
                report.removedBytes += victims.reduce(0) { $0 + $1.bytes }
                if listing {
                    let records = index.entries(bucket).entries
                    report.removedURLs += victims.map { records[$0.digest]?.url ?? $0.digest.hex }
                }
                continue
            }
            guard let removed = removeTrimmed(victims, in: bucket, listing: listing, wait: wait, into: &report) else {
                // Its lock is held by a process that does not let go: left for `clean`, and
                // not counted, so that no other entry goes in its place.
                usages[bucket].bytes = 0
                usages[bucket].entries = 0
                oldest[bucket] = Int64.max
                continue
            }
            removedInodes.formUnion(victims.filter { removed.contains($0.digest) }.map(\.inode))
            let kept = live.filter { !removed.contains($0.digest) }
            usages[bucket] = compact(
                bucket, keeping: kept, removed: victims.filter { removed.contains($0.digest) },
                swept: swept.countedState)
        }
        if takesProtected {
            report.protectedEntries = protected.reduce(0) { $0 + $1.entries }
            report.protectedBytes = protected.reduce(0) { $0 + $1.bytes }
        }
    }

    /// Removes the trim's `victims` from bucket `bucket`, a batch per lock hold, each only if
    /// still the file swept; with each file that no other entry names, its content name.
    /// Counts what was freed: an entry's line, and its file when it was the last to name it.
    /// Nil when the bucket's lock could not be had (``LockWait/bounded``).
    private func removeTrimmed(
        _ victims: [SweptEntry], in bucket: Int, listing: Bool, wait: LockWait, into report: inout CleanReport
    ) -> Set<KeyDigest>? {
        // URLs for the listing, SHA-256s for the content names: one bucket's records.
        let records = index.entries(bucket).entries
        var removed = Set<KeyDigest>()
        var freed: [(sha256: String, inode: UInt64)] = []
        let done = entries.with(bucket, create: false) { folder -> Bool in
            guard folder >= 0 else { return true }
            for start in stride(from: 0, to: victims.count, by: Self.removalBatch) {
                let batch = victims[start..<min(start + Self.removalBatch, victims.count)]
                let held: Void? = withBucketLock(bucket, wait) {
                    for item in batch {
                        var info = stat()
                        guard fstatat(folder, item.digest.hex, &info, AT_SYMLINK_NOFOLLOW) == 0,
                            UInt64(info.st_ino) == item.inode, unlinkat(folder, item.digest.hex, 0) == 0
                        else { continue }
                        removed.insert(item.digest)
                        // This entry's name, and a content name: the last to hold the bytes.
                        let isLast = info.st_nlink <= 2
                        report.removedEntries += 1
                        report.removedBytes += isLast ? item.bytes : item.bytes - item.fileBytes
                        if listing { report.removedURLs.append(records[item.digest]?.url ?? item.digest.hex) }
                        if isLast, info.st_nlink == 2, let sha256 = records[item.digest]?.sha256 {
                            freed.append((sha256, item.inode))
                        }
                    }
                }
                if held == nil { return false }
            }
            return true
        }
        for (sha256, inode) in freed {
            contents.with(ContentFile.bucket(of: sha256), create: false) { folder in
                var info = stat()
                if folder >= 0, fstatat(folder, sha256, &info, AT_SYMLINK_NOFOLLOW) == 0, UInt64(info.st_ino) == inode,
                    info.st_nlink == 1
                {
                    unlinkat(folder, sha256, 0)
                }
            }
        }
        return done || !removed.isEmpty ? removed : nil
    }

    /// `body` under bucket `bucket`'s lock, waiting as `wait` says; nil when not had.
    func withBucketLock<T>(_ bucket: Int, _ wait: LockWait, _ body: () -> T) -> T? {
        switch wait {
        case .always: bucketLock(bucket).withLock(body)
        case .bounded: bucketLock(bucket).withLock(within: waits.bucketLock, body)
        }
    }

    /// Compacts bucket `bucket` after removals, keeping the lines of `kept` (what the sweep
    /// found, less what went) and of the last hour (a writer may be about to name its file),
    /// but not those of `removed` (what went: its line is not a writer's, unless a later
    /// store wrote it), and returns its counters; stored when nothing was appended since the
    /// sweep read the index (`swept`), else recounted. An `unchanged` bucket (already a table
    /// of exactly its live entries, nothing removed) is only counted: `clean` over a tidy
    /// cache reads each index once.
    func compact(
        _ bucket: Int, keeping kept: [SweptEntry], removed: [SweptEntry] = [], swept: BucketFileState?,
        unchanged: Bool = false
    ) -> BucketUsage {
        let limit = FileTime.nanoseconds(now()) - Freshness.nanoseconds(Self.strayTemporaryAge)
        let keep = Set(kept.map(\.digest))
        let gone = Dictionary(removed.map { ($0.digest, $0.storedAt) }, uniquingKeysWith: max)
        let written: BucketUsage? =
            bucketLock(bucket).withLockIfFree {
                let untouched = swept != nil && index.fileState(bucket) == swept
                if !(unchanged && untouched) {
                    index.compact(bucket) { digest, storedAt in
                        keep.contains(digest) || (storedAt > limit && storedAt > gone[digest, default: Int64.min])
                    }
                }
                guard untouched else { return nil }
                let counted = Self.usage(of: kept, state: index.fileState(bucket))
                counted.write(bucket, in: index.usage.value)
                return counted
            } ?? nil
        return written ?? recount(bucket)
    }
}
