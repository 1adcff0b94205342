import FoundationEssentials
import Glibc

extension DiskCache {
    /// A temporary file older than this belongs to a crashed writer, locked or not (one whose
    /// lock is free goes at once, ``WriterTemporary``): live writes take seconds, so an hour
    /// leaves a wide margin for slow disks and huge bodies. Index lines
    /// younger than this are kept by compaction even without their file, which a writer may
    /// be about to name.
    static let strayTemporaryAge: Duration = .seconds(3600)

    /// `sdfetch clean` (<doc:OnDiskFormat#How-it-stays-right>): removes expired entries
    /// (stored more than `maxAge` ago), expired blacklist records, stray temporary files
    /// and anything that is not a regular file, then trims to `maxSize` bytes, least
    /// recently used first, and compacts the index. With `dryRun` nothing is removed but
    /// the report is the same. Without `listing`, `removedURLs` stays empty.
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
            let latest = Freshness.latestBelievable(now: nowNanoseconds)
            let strayLimit = nowNanoseconds - Freshness.nanoseconds(Self.strayTemporaryAge)
            var report = CleanReport()
            let sweepStart = ContentLiveness.sweepStartNow()
            report.removedTemp += removeStrayTemporaries(olderThan: strayLimit, dryRun: dryRun)
            for fake in CacheScan.fakeBuckets(in: entries.parent.value) {
                if dryRun || CacheScan.removeStray(fake, in: entries.parent.value) { report.removedTemp += 1 }
            }
            let sweeps = BucketWorkers.map(Array(0..<Buckets.count)) { self.sweep($0) }
            var kept: [SweptEntry] = []
            var victims: [SweptEntry] = []
            var broken: [(Int, ScannedFile)] = []
            for (bucket, sweep) in sweeps.enumerated() {
                for item in sweep.live {
                    let isFresh = item.storedAt > expiredUpTo && item.storedAt <= latest
                    if isFresh { kept.append(item) } else { victims.append(item) }
                }
                broken += sweep.broken.filter { $0.modifiedAt < strayLimit || !FileTime.isInRange($0.modifiedAt) }
                    .map { (bucket, $0) }
                let abandoned = entries.with(bucket, create: false) { folder in
                    sweep.temporaries.filter { WriterTemporary.isAbandoned($0, in: folder, orBefore: strayLimit) }
                }
                broken += abandoned.map { (bucket, $0) }
                report.removedTemp += sweep.strays.count
                if !dryRun {
                    entries.with(bucket, create: false) { folder in
                        for stray in sweep.strays { _ = CacheScan.removeStray(stray, in: folder) }
                    }
                }
            }
            if let maxSize { victims += Self.leastRecentlyUsed(&kept, over: maxSize, protecting: []) }
            let removed = remove(
                victims, broken: broken, swept: sweeps.map(\.indexState), dryRun: dryRun, listing: listing,
                into: &report)
            countShared(victims, removed: dryRun ? nil : removed, kept: kept, into: &report)
            if !dryRun {
                compactAll(present: sweeps.map { Set($0.live.map(\.digest)) }, removed: removed)
                let swept = sweeps.flatMap(\.live)
                let young = sweeps.flatMap(\.broken).map(\.inode)
                let liveness = ContentLiveness(
                    kept: Set(swept.filter { !removed.contains($0.digest) }.map(\.inode) + young),
                    removed: Set(swept.filter { removed.contains($0.digest) }.map(\.inode)), sweepStart: sweepStart)
                report.removedTemp += removeUnusedContent(judging: liveness)
            }
            if let maxSize, !dryRun { recordWithin(maxSize) }
            report.removedFailed = removeExpiredRecords(recordedUpTo: expiredUpTo, after: latest, dryRun: dryRun)
            return report
        }
    }

    /// `--max-cache-size` (sdfetch(1) FETCH OPTIONS): trims the cache to `maxBytes`,
    /// least recently used first, entries in `keys` (those used by the current run) last.
    /// Call it after a fetch run; it writes the run's noted uses first.
    ///
    /// Costs a scan of every bucket, unless nothing was stored since the last trim to a cap
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
            let sweeps = BucketWorkers.map(Array(0..<Buckets.count)) { bucket in
                let sweep = self.sweep(bucket)
                return (live: sweep.live, indexState: sweep.indexState)
            }
            var kept = sweeps.flatMap(\.live)
            for item in kept where keys.contains(item.digest) {
                report.protectedEntries += 1
                report.protectedBytes += item.bytes
            }
            let victims = Self.leastRecentlyUsed(&kept, over: maxBytes, protecting: keys)
            report.removedProtectedEntries = victims.count(where: { keys.contains($0.digest) })
            let removed = remove(
                victims, broken: [], swept: sweeps.map(\.indexState), dryRun: false, listing: listing, into: &report)
            countShared(victims, removed: removed, kept: kept, into: &report)
            if !victims.isEmpty { _ = removeUnusedContent() }
            recordWithin(maxBytes)
            return report
        }
    }

    // MARK: - Planning

    /// Joins bucket `bucket`'s files with its index, read afresh from disk (and not kept:
    /// memory holds one bucket's records at a time). `each` sees every live entry's record.
    func sweep(_ bucket: Int, _ each: ((SweptEntry, CacheEntry) -> Void)? = nil) -> BucketSweep {
        var sweep = BucketSweep()
        sweep.indexState = index.fileState(bucket)
        guard let each else {
            // Numbers only (clean, the trim): no record decoded into strings, and no `stat` of
            // an entry file the index describes (its size is the record's; `verify` and every
            // hit check the bytes themselves).
            let scan = entries.with(bucket, create: false) { CacheScan.bucket($0, statEntries: false) }
            sweep.temporaries = scan.temporaries
            sweep.strays = scan.strays
            guard !scan.files.isEmpty else { return sweep }
            let summaries = index.summaries(bucket)
            for scanned in scan.files {
                guard let digest = KeyDigest(hex: scanned.name), let line = summaries[digest],
                    scanned.bytes < 0 || line.bytes == scanned.bytes
                else {
                    // Not described by the index: its size and age decide, as for any stray file.
                    var file = scanned
                    if file.bytes < 0 {
                        var info = stat()
                        let found = entries.with(bucket, create: false) { fstatat($0, scanned.name, &info, AT_SYMLINK_NOFOLLOW) == 0 }
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
                        bucket: bucket, digest: digest, file: file, storedAt: line.storedAt, accessedAt: line.usedAt,
                        lineBytes: line.lineBytes))
            }
            return sweep
        }
        let scan = entries.with(bucket, create: false) { CacheScan.bucket($0) }
        sweep.temporaries = scan.temporaries
        sweep.strays = scan.strays
        guard !scan.files.isEmpty else { return sweep }
        let records = index.entries(bucket)
        for file in scan.files {
            guard let digest = KeyDigest(hex: file.name), let entry = records[digest], entry.bytes == file.bytes else {
                sweep.broken.append(file)
                continue
            }
            let item = SweptEntry(bucket: bucket, digest: digest, file: file, entry: entry)
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
        var shared = SharedFiles.counts(kept)
        var total = SharedFiles.footprint(kept, shared: shared)
        guard total > maxBytes else { return [] }
        // Sorting indices, not entries: 100,000 entries are cheaper to rank by key than to move.
        let ranks = kept.map { (isProtected: protected.contains($0.digest), usedAt: $0.accessedAt) }
        let order = kept.indices.sorted { lhs, rhs in
            ranks[lhs].isProtected != ranks[rhs].isProtected
                ? !ranks[lhs].isProtected : ranks[lhs].usedAt < ranks[rhs].usedAt
        }
        var count = 0
        while total > maxBytes && count < order.count {
            let item = kept[order[count]]
            // A file other kept entries name stays: only the line goes.
            if let others = shared[item.inode], others > 1 {
                shared[item.inode] = others - 1
                total -= item.bytes - item.fileBytes
            } else {
                total -= item.bytes
            }
            count += 1
        }
        let victims = order[..<count].map { kept[$0] }
        kept = order[count...].map { kept[$0] }
        return victims
    }

    // MARK: - Removing

    /// Counts what remains and what went with shared files once: `removed` are the victims
    /// actually removed (nil in a dry run: all of them), the rest of `victims` remain.
    private func countShared(
        _ victims: [SweptEntry], removed: Set<KeyDigest>?, kept: [SweptEntry], into report: inout CleanReport
    ) {
        let gone = removed.map { set in victims.filter { set.contains($0.digest) } } ?? victims
        let stayed = removed.map { set in victims.filter { !set.contains($0.digest) } } ?? []
        let remaining = kept + stayed
        let listed = gone.reduce(0) { $0 + $1.bytes }
        report.removedBytes += SharedFiles.freed(gone, keeping: remaining) - listed
        report.entries += kept.count
        report.bytes = SharedFiles.footprint(remaining)
    }

    /// Removes the content files no entry links any more, and anything else in `content/`
    /// that is not a content file (<doc:OnDiskFormat#Identical-bytes>). No lock: an entry
    /// that links a content file between the check and the removal keeps its bytes, and
    /// only that sharing is lost. Returns how many names that were not content files went.
    ///
    /// - Parameter liveness: `clean`'s judgement from its sweep (``ContentLiveness``), which
    ///   also drops content files that only links outside the cache keep (`-o --link`);
    ///   without it, a link count of 1 alone.
    func removeUnusedContent(judging liveness: ContentLiveness? = nil) -> Int {
        var strays = 0
        for fake in CacheScan.fakeBuckets(in: contents.parent.value) where CacheScan.removeStray(fake, in: contents.parent.value) {
            strays += 1
        }
        let counts = BucketWorkers.map(Array(0..<Buckets.count)) { bucket in
            self.contents.with(bucket, create: false) { folder -> Int in
                var strays = 0
                ContentFile.forEach(in: folder) { name, info in
                    guard ContentFile.isUnused(name, info) || (info.map { liveness?.isDead($0) ?? false } ?? false)
                    else { return }
                    let isStray = !ContentFile.isName(name) || info.map { ($0.st_mode & S_IFMT) != S_IFREG } ?? false
                    if CacheScan.removeStray(name, in: folder), isStray { strays += 1 }
                }
                return strays
            }
        }
        return strays + counts.reduce(0, +)
    }

    /// Deletes `victims` and `broken` files, buckets in parallel, a batch per lock hold,
    /// each checked again under the lock: a file replaced since the sweep is kept and
    /// counted as remaining. `removedURLs` keeps the victims' order. Returns the digests of
    /// the entries removed.
    @discardableResult
    private func remove(
        _ victims: [SweptEntry], broken: [(Int, ScannedFile)], swept indexStates: [BucketFileState?], dryRun: Bool,
        listing: Bool, into report: inout CleanReport
    ) -> Set<KeyDigest> {
        if dryRun {
            report.removedEntries += victims.count
            report.removedBytes += victims.reduce(0) { $0 + $1.bytes }
            report.removedTemp += broken.count
            if listing {
                var records: [Int: [KeyDigest: CacheEntry]] = [:]
                for item in victims {
                    if records[item.bucket] == nil { records[item.bucket] = index.entries(item.bucket) }
                    report.removedURLs.append(records[item.bucket]?[item.digest]?.url ?? item.digest.hex)
                }
            }
            return []
        }
        let byBucket = Dictionary(grouping: victims.enumerated(), by: \.element.bucket)
        let brokenByBucket = Dictionary(grouping: broken, by: \.0)
        let buckets = Set(byBucket.keys).union(brokenByBucket.keys).sorted()
        let partials = BucketWorkers.map(buckets) { bucket in
            self.remove(
                (byBucket[bucket] ?? []).map { ($0.offset, $0.element) },
                broken: (brokenByBucket[bucket] ?? []).map(\.1), in: bucket, swept: indexStates[bucket], listing: listing)
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

    /// One bucket's share of a removal.
    private struct Removal: Sendable {
        var report = CleanReport()
        var urls: [(position: Int, url: String)] = []
        var digests = Set<KeyDigest>()
    }

    private func remove(
        _ items: [(Int, SweptEntry)], broken: [ScannedFile], in bucket: Int, swept indexState: BucketFileState?,
        listing: Bool
    ) -> Removal {
        entries.with(bucket, create: false) { folder in
            remove(items, broken: broken, in: bucket, folder: folder, swept: indexState, listing: listing)
        }
    }

    private func remove(
        _ items: [(Int, SweptEntry)], broken: [ScannedFile], in bucket: Int, folder: Int32,
        swept indexState: BucketFileState?, listing: Bool
    ) -> Removal {
        var removal = Removal()
        // Only listings need URLs: the index is read again for them, once per bucket.
        let records = listing ? index.entries(bucket) : [:]
        for start in stride(from: 0, to: items.count, by: Self.removalBatch) {
            bucketLock(bucket).withLock {
                // An index untouched since the sweep proves no file of the bucket was replaced
                // (see CacheIndex.fileState), which spares a stat per file.
                let untouched = indexState != nil && index.fileState(bucket) == indexState
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
        bucketLock(bucket).withLock {
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
        _ = BucketWorkers.map(Array(0..<Buckets.count)) { bucket in
            self.bucketLock(bucket).withLock {
                self.index.compact(bucket) { digest, storedAt in
                    // A young line may be a store made after the sweep (even of a key just removed).
                    storedAt > limit || (present[bucket].contains(digest) && !removed.contains(digest))
                }
            }
        }
    }

    /// Removes temporary files left in `tmp/` and `index/` by crashed writers (unlocked, see
    /// ``WriterTemporary``, or last modified before `limit`, ns since 1970), and anything
    /// there that is not a regular file.
    func removeStrayTemporaries(olderThan limit: Int64, dryRun: Bool) -> Int {
        var removed = 0
        for folder in [temporary.value, index.folder.value] where folder >= 0 {
            let scan = CacheScan.bucket(folder)
            for file in scan.temporaries where WriterTemporary.isAbandoned(file, in: folder, orBefore: limit) {
                if dryRun || unlinkat(folder, file.name, 0) == 0 { removed += 1 }
            }
            for stray in scan.strays where Buckets.index(named: stray) == nil || folder == index.folder.value {
                if dryRun || CacheScan.removeStray(stray, in: folder) { removed += 1 }
            }
        }
        return removed
    }
}
