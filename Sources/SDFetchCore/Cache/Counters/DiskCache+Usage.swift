import FoundationEssentials
import Glibc

/// The buckets' counters (<doc:OnDiskFormat#Counters-and-trimming>): what lets a trim
/// size the cache from 256 small files instead of a scan of every entry.
extension DiskCache {
    /// Adds what this process changed to the counters of every bucket it wrote, each under
    /// its bucket's lock when that is free now; counters it cannot reach stay behind, and
    /// are recounted by whoever needs them next.
    func reportUsage() {
        for (bucket, pending) in index.ledger.take() {
            _ = bucketLock(bucket).withLockIfFree { index.report(bucket, pending) }
        }
    }

    /// Bucket `bucket`'s counters: as stored when they match its index file, else recounted.
    func usage(_ bucket: Int) -> BucketUsage {
        if let stored = BucketUsage.read(bucket, in: index.usage.value), stored.isCurrent(for: index.fileState(bucket))
        {
            return stored
        }
        return recount(bucket)
    }

    /// Counts bucket `bucket` from its files (one bucket's index and folder names in
    /// memory) and stores the counters when its lock is free now.
    @discardableResult
    func recount(_ bucket: Int) -> BucketUsage {
        let sweep = sweep(bucket)
        let counted = Self.usage(of: sweep.live, state: sweep.countedState)
        _ = bucketLock(bucket).withLockIfFree { counted.write(bucket, in: index.usage.value) }
        return counted
    }

    /// The counters of `live`, the entries a sweep of an index file found at `state`.
    static func usage(of live: [SweptEntry], state: BucketFileState?) -> BucketUsage {
        var counted = BucketUsage(inode: state?.inode ?? 0, length: state?.size ?? 0)
        for item in live { counted.add(bytes: item.bytes, usedAt: item.accessedAt, storedAt: item.storedAt) }
        return counted
    }

    /// Every bucket's counters, recounting those behind their index (on a few threads: a
    /// copied cache, or one of an earlier build, recounts every bucket once).
    func allUsage() -> [BucketUsage] {
        BucketWorkers.map(Array(0..<Buckets.count)) { self.usage($0) }
    }
}
