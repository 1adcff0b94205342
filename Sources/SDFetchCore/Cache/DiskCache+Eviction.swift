import FoundationEssentials
import Glibc

/// What `clean` or the end-of-run trim removed (or, in a dry run, would remove) and what remains.
public struct CleanReport: Sendable, Equatable {
    public var removedEntries = 0
    /// Bytes of every removed entry (file and index line).
    public var removedBytes: Int64 = 0
    public var removedFailed = 0
    /// Stray temporary files, entry files without a record or not matching it, and
    /// anything that is not a regular file (links, FIFOs), removed themselves, never their targets.
    public var removedTemp = 0
    /// Entries and their bytes remaining afterwards.
    public var entries = 0
    public var bytes: Int64 = 0
    /// URLs of the removed entries, in removal order (LRU order for trimmed ones).
    public var removedURLs: [String] = []
    /// The trim knew the cache was within the cap without scanning it: nothing was
    /// removed, and `entries` and `bytes` were not counted.
    public var wasSkipped = false

    public init() {}
}

/// One entry as a sweep sees it, in the few numbers a trim needs: no strings, so a sweep of
/// a million entries holds tens of megabytes, not the entries' records.
struct SweptEntry: Sendable {
    let shard: Int
    let digest: KeyDigest
    /// The entry file as scanned, to check under the lock that it is still that file.
    let inode: UInt64
    let fileBytes: Int64
    /// The file's mtime (ns), the record's stored and last-use times (ns).
    let modifiedAt: Int64
    let storedAt: Int64
    let accessedAt: Int64
    /// File and index line: the entry's share of the cache's size.
    let bytes: Int64

    init(shard: Int, digest: KeyDigest, file: ScannedFile, entry: CacheEntry) {
        self.init(
            shard: shard, digest: digest, file: file, storedAt: FileTime.nanoseconds(entry.storedAt),
            accessedAt: FileTime.nanoseconds(entry.accessedAt), lineBytes: IndexRecord.lineLength(of: entry))
    }

    init(shard: Int, digest: KeyDigest, file: ScannedFile, storedAt: Int64, accessedAt: Int64, lineBytes: Int) {
        self.shard = shard
        self.digest = digest
        inode = file.inode
        fileBytes = file.bytes
        modifiedAt = file.modifiedAt
        self.storedAt = storedAt
        self.accessedAt = accessedAt
        bytes = file.bytes + Int64(lineBytes)
    }

    var file: ScannedFile { ScannedFile(name: digest.hex, bytes: fileBytes, modifiedAt: modifiedAt, inode: inode) }

    /// The file by inode alone, for the check before removal.
    var fileIdentity: ScannedFile { ScannedFile(name: digest.hex, bytes: -1, modifiedAt: modifiedAt, inode: inode) }
}

/// What a sweep of one shard found.
struct ShardSweep: Sendable {
    var live: [SweptEntry] = []
    /// Files to remove whatever the age: no record, or not the recorded bytes.
    var broken: [ScannedFile] = []
    var temporaries: [ScannedFile] = []
    var strays: [String] = []
    /// The shard's bucket file before the folder was read (see ``CacheIndex/fileState(_:)``).
    var bucket: BucketFileState?
}

extension DiskCache {
    /// A temporary file older than this belongs to a crashed writer: live writes take
    /// seconds, so an hour leaves a wide margin for slow disks and huge bodies. Index lines
    /// younger than this are kept by compaction even without their file, which a writer may
    /// be about to name.
    static let strayTemporaryAge: Duration = .seconds(3600)

    /// SPEC `clean`: removes expired entries (stored more than `maxAge` ago), expired
    /// blacklist records, stray temporary files and anything that is not a regular file,
    /// then trims to `maxSize` bytes, least recently used first, and compacts the index.
    /// With `dryRun` nothing is removed but the report is the same. Without `listing`,
    /// `removedURLs` stays empty.
    ///
    /// Idempotent, and safe while fetches run (see ``DirectoryLock``). Blocks while another
    /// `clean`, `verify` or trim runs on the same directory.
    public func clean(
        maxAge: Duration, maxSize: Int64?, dryRun: Bool, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        maintenanceLock.withLock { () -> CleanReport in
            flushUses()
            let nowNanoseconds = FileTime.nanoseconds(now())
            let expiredUpTo = Freshness(maxAge: maxAge).expiredUpTo(now: nowNanoseconds)
            let strayLimit = nowNanoseconds - Freshness.nanoseconds(Self.strayTemporaryAge)
            var report = CleanReport()
            report.removedTemp += removeStrayTemporaries(olderThan: strayLimit, dryRun: dryRun)
            for fake in CacheScan.fakeShards(in: entries.parent.value) {
                if dryRun || CacheScan.removeStray(fake, in: entries.parent.value) { report.removedTemp += 1 }
            }
            let sweeps = ShardWorkers.map(Array(0..<Shards.count)) { self.sweep($0) }
            var kept: [SweptEntry] = []
            var victims: [SweptEntry] = []
            var broken: [(Int, ScannedFile)] = []
            for (shard, sweep) in sweeps.enumerated() {
                for item in sweep.live {
                    if item.storedAt > expiredUpTo { kept.append(item) } else { victims.append(item) }
                }
                broken += sweep.broken.filter { $0.modifiedAt < strayLimit }.map { (shard, $0) }
                broken += sweep.temporaries.filter { $0.modifiedAt < strayLimit }.map { (shard, $0) }
                report.removedTemp += sweep.strays.count
                if !dryRun {
                    entries.with(shard, create: false) { folder in
                        for stray in sweep.strays { _ = CacheScan.removeStray(stray, in: folder) }
                    }
                }
            }
            if let maxSize { victims += Self.leastRecentlyUsed(&kept, over: maxSize, protecting: []) }
            let removed = remove(
                victims, broken: broken, swept: sweeps.map(\.bucket), dryRun: dryRun, listing: listing, into: &report)
            if !dryRun { compactAll(present: sweeps.map { Set($0.live.map(\.digest)) }, removed: removed) }
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            if let maxSize, !dryRun { recordWithin(maxSize) }
            report.removedFailed = removeExpiredRecords(recordedUpTo: expiredUpTo, dryRun: dryRun)
            return report
        }
    }

    /// SPEC `--max-cache-size`: trims the cache to `maxBytes`, least recently used first,
    /// entries in `keys` (those used by the current run) last. Call it after a fetch run;
    /// it writes the run's noted uses first.
    ///
    /// Costs a scan of every shard, unless nothing was stored since the last trim to a cap
    /// no larger (see ``isKnownWithin(_:)``); expired entries are left for `clean`.
    public func enforceLimit(
        maxBytes: Int64, protecting keys: Set<KeyDigest>, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        flushUses()
        return maintenanceLock.withLock { () -> CleanReport in
            var report = CleanReport()
            if isKnownWithin(maxBytes) {
                report.wasSkipped = true
                return report
            }
            let sweeps = ShardWorkers.map(Array(0..<Shards.count)) { shard in
                let sweep = self.sweep(shard)
                return (live: sweep.live, bucket: sweep.bucket)
            }
            var kept = sweeps.flatMap(\.live)
            let victims = Self.leastRecentlyUsed(&kept, over: maxBytes, protecting: keys)
            remove(victims, broken: [], swept: sweeps.map(\.bucket), dryRun: false, listing: listing, into: &report)
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            recordWithin(maxBytes)
            return report
        }
    }

    // MARK: - Planning

    /// Joins shard `shard`'s files with its index bucket, read afresh from disk (and not kept:
    /// memory holds one shard's records at a time). `each` sees every live entry's record.
    func sweep(_ shard: Int, _ each: ((SweptEntry, CacheEntry) -> Void)? = nil) -> ShardSweep {
        var sweep = ShardSweep()
        sweep.bucket = index.fileState(shard)
        guard let each else {
            // Numbers only (clean, the trim): no record decoded into strings, and no `stat` of
            // an entry file the index describes (its size is the record's; `verify` and every
            // hit check the bytes themselves).
            let scan = entries.with(shard, create: false) { CacheScan.shard($0, statEntries: false) }
            sweep.temporaries = scan.temporaries
            sweep.strays = scan.strays
            guard !scan.files.isEmpty else { return sweep }
            let summaries = index.summaries(shard)
            for scanned in scan.files {
                guard let digest = KeyDigest(hex: scanned.name), let line = summaries[digest],
                    scanned.bytes < 0 || line.bytes == scanned.bytes
                else {
                    // Not described by the index: its size and age decide, as for any stray file.
                    var file = scanned
                    if file.bytes < 0 {
                        var info = stat()
                        let found = entries.with(shard, create: false) { fstatat($0, scanned.name, &info, AT_SYMLINK_NOFOLLOW) == 0 }
                        guard found else { continue }
                        file = ScannedFile(
                            name: scanned.name, bytes: Int64(info.st_size), modifiedAt: FileTime.nanoseconds(info.st_mtim),
                            inode: UInt64(info.st_ino))
                    }
                    sweep.broken.append(file)
                    continue
                }
                let file = ScannedFile(name: scanned.name, bytes: line.bytes, modifiedAt: scanned.modifiedAt, inode: scanned.inode)
                sweep.live.append(
                    SweptEntry(
                        shard: shard, digest: digest, file: file, storedAt: line.storedAt, accessedAt: line.usedAt,
                        lineBytes: line.lineBytes))
            }
            return sweep
        }
        let scan = entries.with(shard, create: false) { CacheScan.shard($0) }
        sweep.temporaries = scan.temporaries
        sweep.strays = scan.strays
        guard !scan.files.isEmpty else { return sweep }
        let records = index.read(shard).entries
        for file in scan.files {
            guard let digest = KeyDigest(hex: file.name), let entry = records[digest], entry.bytes == file.bytes else {
                sweep.broken.append(file)
                continue
            }
            let item = SweptEntry(shard: shard, digest: digest, file: file, entry: entry)
            each(item, entry)
            sweep.live.append(item)
        }
        return sweep
    }

    /// Moves the least recently used of `kept` out until the rest fit in `maxBytes`;
    /// entries whose digest is in `protected` go only after all others.
    static func leastRecentlyUsed(
        _ kept: inout [SweptEntry], over maxBytes: Int64, protecting protected: Set<KeyDigest>
    ) -> [SweptEntry] {
        var total = kept.reduce(0) { $0 + $1.bytes }
        guard total > maxBytes else { return [] }
        // Sorting indices, not entries: 100,000 entries are cheaper to rank by key than to move.
        let ranks = kept.map { (isProtected: protected.contains($0.digest), usedAt: $0.accessedAt) }
        let order = kept.indices.sorted { lhs, rhs in
            ranks[lhs].isProtected != ranks[rhs].isProtected
                ? !ranks[lhs].isProtected : ranks[lhs].usedAt < ranks[rhs].usedAt
        }
        var count = 0
        while total > maxBytes && count < order.count {
            total -= kept[order[count]].bytes
            count += 1
        }
        let victims = order[..<count].map { kept[$0] }
        kept = order[count...].map { kept[$0] }
        return victims
    }

    // MARK: - Removing

    /// Deletes `victims` and `broken` files, shards in parallel, a batch per lock hold,
    /// each checked again under the lock: a file replaced since the sweep is kept and
    /// counted as remaining. `removedURLs` keeps the victims' order. Returns the digests of
    /// the entries removed.
    @discardableResult
    private func remove(
        _ victims: [SweptEntry], broken: [(Int, ScannedFile)], swept buckets: [BucketFileState?], dryRun: Bool,
        listing: Bool, into report: inout CleanReport
    ) -> Set<KeyDigest> {
        if dryRun {
            report.removedEntries += victims.count
            report.removedBytes += victims.reduce(0) { $0 + $1.bytes }
            report.removedTemp += broken.count
            if listing {
                var records: [Int: [KeyDigest: CacheEntry]] = [:]
                for item in victims {
                    if records[item.shard] == nil { records[item.shard] = index.read(item.shard).entries }
                    report.removedURLs.append(records[item.shard]?[item.digest]?.url ?? item.digest.hex)
                }
            }
            return []
        }
        let byShard = Dictionary(grouping: victims.enumerated(), by: \.element.shard)
        let brokenByShard = Dictionary(grouping: broken, by: \.0)
        let shards = Set(byShard.keys).union(brokenByShard.keys).sorted()
        let partials = ShardWorkers.map(shards) { shard in
            self.remove(
                (byShard[shard] ?? []).map { ($0.offset, $0.element) }, broken: (brokenByShard[shard] ?? []).map(\.1),
                in: shard, swept: buckets[shard], listing: listing)
        }
        var removedURLs: [(position: Int, url: String)] = []
        var removed = Set<KeyDigest>()
        for partial in partials {
            report.entries += partial.report.entries
            report.bytes += partial.report.bytes
            report.removedEntries += partial.report.removedEntries
            report.removedBytes += partial.report.removedBytes
            report.removedTemp += partial.report.removedTemp
            removedURLs += partial.urls
            removed.formUnion(partial.digests)
        }
        report.removedURLs += removedURLs.sorted { $0.position < $1.position }.map(\.url)
        return removed
    }

    /// One shard's share of a removal.
    private struct Removal: Sendable {
        var report = CleanReport()
        var urls: [(position: Int, url: String)] = []
        var digests = Set<KeyDigest>()
    }

    private func remove(
        _ items: [(Int, SweptEntry)], broken: [ScannedFile], in shard: Int, swept bucket: BucketFileState?, listing: Bool
    ) -> Removal {
        entries.with(shard, create: false) { folder in
            remove(items, broken: broken, in: shard, folder: folder, swept: bucket, listing: listing)
        }
    }

    private func remove(
        _ items: [(Int, SweptEntry)], broken: [ScannedFile], in shard: Int, folder: Int32,
        swept bucket: BucketFileState?, listing: Bool
    ) -> Removal {
        var removal = Removal()
        // Only listings need URLs: the bucket is read again for them, once per shard.
        let records = listing ? index.read(shard).entries : [:]
        for start in stride(from: 0, to: items.count, by: Self.removalBatch) {
            shardLock(shard).withLock {
                // A bucket untouched since the sweep proves no file of the shard was replaced
                // (see CacheIndex.fileState), which spares a stat per file.
                let untouched = bucket != nil && index.fileState(shard) == bucket
                for (position, item) in items[start..<min(start + Self.removalBatch, items.count)] {
                    // Still the file swept (same inode): one replaced since is kept. Its size is
                    // not asked: an entry chosen to go goes, edited or not.
                    if untouched || CacheScan.isUnchanged(item.file.name, in: folder, as: item.fileIdentity),
                        unlinkat(folder, item.file.name, 0) == 0
                    {
                        removal.report.removedEntries += 1
                        removal.report.removedBytes += item.bytes
                        removal.digests.insert(item.digest)
                        if listing { removal.urls.append((position, records[item.digest]?.url ?? item.digest.hex)) }
                    } else {
                        removal.report.entries += 1
                        removal.report.bytes += item.bytes
                    }
                }
            }
        }
        guard !broken.isEmpty else { return removal }
        shardLock(shard).withLock {
            for file in broken
            where CacheScan.isUnchanged(file.name, in: folder, as: file) && unlinkat(folder, file.name, 0) == 0 {
                removal.report.removedTemp += 1
                removal.report.removedBytes += file.bytes
            }
        }
        return removal
    }

    /// Rewrites every index bucket with garbage in it, keeping one line per entry whose file
    /// the sweep saw (`present`, less what was removed since) and the lines of the last
    /// hour, whose files a writer may be about to name (it appends before it links).
    func compactAll(present: [Set<KeyDigest>], removed: Set<KeyDigest>) {
        let limit = FileTime.nanoseconds(now()) - Freshness.nanoseconds(Self.strayTemporaryAge)
        _ = ShardWorkers.map(Array(0..<Shards.count)) { shard in
            self.shardLock(shard).withLock {
                self.index.compact(shard) { digest, storedAt in
                    // A young line may be a store made after the sweep (even of a key just removed).
                    storedAt > limit || (present[shard].contains(digest) && !removed.contains(digest))
                }
            }
        }
    }

    /// Removes temporary files left in `tmp/` and `index/` by crashed writers (last modified
    /// before `limit`, ns since 1970), and anything there that is not a regular file.
    func removeStrayTemporaries(olderThan limit: Int64, dryRun: Bool) -> Int {
        var removed = 0
        for folder in [temporary.value, index.folder.value] where folder >= 0 {
            let scan = CacheScan.shard(folder)
            for file in scan.temporaries where file.modifiedAt < limit {
                if dryRun || unlinkat(folder, file.name, 0) == 0 { removed += 1 }
            }
            for stray in scan.strays where Shards.index(named: stray) == nil || folder == index.folder.value {
                if dryRun || CacheScan.removeStray(stray, in: folder) { removed += 1 }
            }
        }
        return removed
    }
}
