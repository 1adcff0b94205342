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
    /// (stored more than `maxAge` ago), expired blacklist records, host-down records older
    /// than a day (``HostDownMemory``), stray temporary files
    /// and anything that is not a regular file, then trims to `maxSize` bytes, least
    /// recently used first, and compacts the index. With `dryRun` nothing is removed but
    /// the report is the same. Without `listing`, `removedURLs` stays empty.
    ///
    /// Works one bucket at a time (memory holds a bucket's entries, not the cache's), each
    /// under its lock only while removing a batch or compacting; idempotent, and safe while
    /// fetches run (see ``DirectoryLock``). Waits while another `clean`, `verify` or `merge`
    /// runs on the same directory.
    public func clean(
        maxAge: Duration, maxSize: Int64?, dryRun: Bool, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        maintenanceLock.withLock { () -> CleanReport in
            flushUses()
            reportUsage()
            let nowNanoseconds = FileTime.nanoseconds(now())
            let expiredUpTo = Freshness(maxAge: maxAge).expiredUpTo(now: nowNanoseconds)
            let latest = Freshness.latestBelievable(now: nowNanoseconds)
            let strayLimit = nowNanoseconds - Freshness.nanoseconds(Self.strayTemporaryAge)
            var report = CleanReport()
            var steps = CleanSteps()
            let sweepStart = ContentLiveness.sweepStartNow()
            report.removedTemp += steps.run("temporaries") {
                let fakes = CacheScan.fakeBuckets(in: entries.parent.value).count { fake in
                    dryRun || CacheScan.removeStray(fake, in: entries.parent.value)
                }
                return removeStrayTemporaries(olderThan: strayLimit, dryRun: dryRun) + fakes
            }
            var partials: [BucketClean] = []
            steps.run("buckets") {
                partials = BucketWorkers.map(Array(0..<Buckets.count)) { bucket in
                    self.clean(
                        bucket, isFresh: { $0 > expiredUpTo && $0 <= latest }, strayLimit: strayLimit,
                        dryRun: dryRun, listing: listing)
                }
                return partials.reduce(0) { $0 + $1.report.removedEntries + $1.report.removedTemp }
            }
            var usages: [BucketUsage] = []
            var expired: [Int: Set<KeyDigest>] = [:]
            // Inodes of the entry files kept and removed, for ``ContentLiveness``: 8 bytes an entry.
            var keptInodes = Set<UInt64>()
            var removedInodes = Set<UInt64>()
            for (bucket, partial) in partials.enumerated() {
                report.removedEntries += partial.report.removedEntries
                report.removedBytes += partial.report.removedBytes
                report.removedTemp += partial.report.removedTemp
                report.removedURLs += partial.report.removedURLs
                usages.append(partial.usage)
                if !partial.expired.isEmpty { expired[bucket] = partial.expired }
                keptInodes.formUnion(partial.keptInodes)
                removedInodes.formUnion(partial.removedInodes)
            }
            if let maxSize {
                var trimmed = Set<UInt64>()
                steps.run("trim") {
                    let before = report.removedEntries
                    trim(
                        &usages, to: maxSize, protecting: [], dryRun: dryRun, listing: listing, wait: .always,
                        gone: expired, removedInodes: &trimmed, into: &report)
                    return report.removedEntries - before
                }
                keptInodes.subtract(trimmed)
                removedInodes.formUnion(trimmed)
            }
            report.entries = usages.reduce(0) { $0 + $1.entries }
            report.bytes = usages.reduce(0) { $0 + $1.bytes }
            // A dry run does not judge the content files: they are the entries' other names.
            report.removedTemp += steps.run("content") {
                guard !dryRun else { return 0 }
                let liveness = ContentLiveness(kept: keptInodes, removed: removedInodes, sweepStart: sweepStart)
                return removeUnusedContent(judging: liveness)
            }
            if let maxSize, !dryRun, report.bytes <= maxSize { recordWithin(maxSize) }
            report.removedFailed = steps.run("failed") {
                removeExpiredRecords(recordedUpTo: expiredUpTo, after: latest, dryRun: dryRun)
            }
            report.removedHosts = steps.run("hosts") {
                removeExpiredHostRecords(now: nowNanoseconds, after: latest, dryRun: dryRun)
            }
            report.steps = steps.done
            return report
        }
    }

    /// What `clean` did in one bucket.
    private struct BucketClean: Sendable {
        var report = CleanReport()
        /// The bucket's counters afterwards.
        var usage = BucketUsage()
        /// In a dry run, the expired entries that would go.
        var expired = Set<KeyDigest>()
        /// Entry files kept (live, or broken and too young to judge) and removed.
        var keptInodes: [UInt64] = []
        var removedInodes: [UInt64] = []
    }

    /// `clean`'s work in one bucket: its expired entries, stray and broken files go, its
    /// index is compacted, and its counters are returned (and stored).
    private func clean(
        _ bucket: Int, isFresh: (Int64) -> Bool, strayLimit: Int64, dryRun: Bool, listing: Bool
    ) -> BucketClean {
        var result = BucketClean()
        if let tidy = tidyUsage(bucket, isFresh: isFresh) {
            result.usage = tidy.usage
            result.keptInodes = tidy.inodes
            return result
        }
        var report = CleanReport()
        // Parsed once for both the sweep and the compaction that follows.
        let sweep = sweep(bucket, forCompaction: true)
        defer { index.forgetParsed(bucket) }
        var kept: [SweptEntry] = []
        var victims: [SweptEntry] = []
        for item in sweep.live {
            if isFresh(item.storedAt) { kept.append(item) } else { victims.append(item) }
        }
        let abandoned = entries.with(bucket, create: false) { folder in
            sweep.temporaries.filter {
                WriterTemporary.isAbandoned($0, in: folder, orBefore: strayLimit, grace: waits.writerGrace)
            }
        }
        let broken =
            sweep.broken.filter { $0.modifiedAt < strayLimit || !FileTime.isInRange($0.modifiedAt) } + abandoned
        report.removedTemp += sweep.strays.count
        if dryRun {
            report.removedEntries += victims.count
            // What removing would free: a file other entries name stays (as ``remove`` counts).
            report.removedBytes += entries.with(bucket, create: false) { folder in
                victims.reduce(0) { total, item in
                    var info = stat()
                    let isShared =
                        fstatat(folder, item.digest.hex, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_nlink > 2
                    return total + (isShared ? item.bytes - item.fileBytes : item.bytes)
                }
            }
            report.removedTemp += broken.count
            if listing && !victims.isEmpty {
                let records = index.entries(bucket).entries
                report.removedURLs += victims.map { records[$0.digest]?.url ?? $0.digest.hex }
            }
            result.report = report
            result.usage = Self.usage(of: kept, state: nil)
            result.expired = Set(victims.map(\.digest))
            result.keptInodes = kept.map(\.inode) + sweep.broken.map(\.inode)
            return result
        }
        entries.with(bucket, create: false) { folder in
            for stray in sweep.strays { _ = CacheScan.removeStray(stray, in: folder) }
        }
        let removal = remove(
            victims.enumerated().map { ($0.offset, $0.element) }, broken: broken, in: bucket, swept: sweep.indexState,
            listing: listing)
        report.removedEntries += removal.report.removedEntries
        report.removedBytes += removal.report.removedBytes
        report.removedTemp += removal.report.removedTemp
        report.removedURLs += removal.urls.map(\.url)
        // Victims a replacement saved stay, as entries the next sweep sees.
        kept += victims.filter { !removal.digests.contains($0.digest) }
        let unchanged = sweep.isCompact && victims.isEmpty && broken.isEmpty
        result.report = report
        result.usage = compact(bucket, keeping: kept, swept: sweep.countedState, unchanged: unchanged)
        result.keptInodes = kept.map(\.inode) + sweep.broken.map(\.inode)
        result.removedInodes = victims.filter { removal.digests.contains($0.digest) }.map(\.inode)
        return result
    }

    /// Bucket `bucket`'s counters and entry files' inodes when its counters say there is
    /// nothing for `clean` to do there: current for its index file, every entry fresh by
    /// their span of stored times, and as many files in its folder as they count entries,
    /// every one an entry's name; and its index is worth no compaction (a log tail of at
    /// most ``IndexBucket/tidyTailShare`` of the file: every run that looks the bucket up
    /// maps its tail, and any line that no longer counts lies there). `clean`
    /// over a tidy cache lists each folder and reads 256 counters, never an index
    /// (<doc:OnDiskFormat#Counters-and-trimming>).
    private func tidyUsage(_ bucket: Int, isFresh: (Int64) -> Bool) -> (usage: BucketUsage, inodes: [UInt64])? {
        guard let counters = BucketUsage.read(bucket, in: index.usage.value),
            counters.entries == 0 || (isFresh(counters.storedFrom) && isFresh(counters.storedTo))
        else { return nil }
        let tail = index.tail(bucket)
        guard counters.isCurrent(for: tail?.state), (tail?.bytes ?? 0) <= counters.length / IndexBucket.tidyTailShare,
            let inodes = entries.with(bucket, create: false, { CacheScan.entryInodes(in: $0) }),
            inodes.count == counters.entries
        else { return nil }
        return (counters, inodes)
    }

    /// `--max-cache-size` (sdfetch(1) FETCH OPTIONS): trims the cache to `maxBytes`,
    /// least recently used first, entries in `keys` (those used by the current run) last.
    /// Call it after a fetch run; it writes the run's noted uses first.
    ///
    /// Sizes the cache from the buckets' counters (<doc:OnDiskFormat#Counters-and-trimming>)
    /// and reads only the buckets whose counters are behind and those holding its victims;
    /// nothing at all when nothing was stored since the last trim to a cap no larger (see
    /// ``isKnownWithin(_:)``). Never waits for maintenance: when another process holds the
    /// maintenance lock the trim is left for later (``CleanReport/wasDeferred``). Expired
    /// entries are left for `clean`.
    public func enforceLimit(
        maxBytes: Int64, protecting keys: KeyDigestSet, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        flushUses()
        reportUsage()
        var skipped = CleanReport()
        skipped.wasSkipped = true
        // Nothing stored since a trim to this cap or less: not even the lock is asked.
        if isKnownWithin(maxBytes) { return skipped }
        let trimmed = maintenanceLock.withLockIfFree { () -> CleanReport in
            var report = CleanReport()
            if isKnownWithin(maxBytes) { return skipped }
            var usages = allUsage()
            var removedInodes = Set<UInt64>()
            trim(
                &usages, to: maxBytes, protecting: keys, dryRun: false, listing: listing, wait: .bounded,
                removedInodes: &removedInodes, into: &report)
            report.entries = usages.reduce(0) { $0 + $1.entries }
            report.bytes = usages.reduce(0) { $0 + $1.bytes }
            if report.bytes <= maxBytes { recordWithin(maxBytes) }
            return report
        }
        if let trimmed { return trimmed }
        var report = CleanReport()
        report.wasDeferred = true
        return report
    }

    // MARK: - Planning

    /// Joins bucket `bucket`'s files with its index, read afresh from disk (and not kept:
    /// memory holds one bucket's records at a time). `each` sees every live entry's record.
    func sweep(
        _ bucket: Int, forCompaction: Bool = false, _ each: ((SweptEntry, CacheEntry) -> Void)? = nil
    )
        -> BucketSweep
    {
        var sweep = BucketSweep()
        sweep.indexState = index.fileState(bucket)
        sweep.countedState = sweep.indexState
        guard let each else {
            // Numbers only (clean, the trim): no record decoded into strings, and no `stat` of
            // an entry file the index describes (its size is the record's; `verify` and every
            // hit check the bytes themselves).
            let scan = entries.with(bucket, create: false) { CacheScan.bucket($0, statEntries: false) }
            sweep.temporaries = scan.temporaries
            sweep.strays = scan.strays
            guard !scan.files.isEmpty else { return sweep }
            let (summaries, counted, isCompact) = index.summaries(bucket, forCompaction: forCompaction)
            sweep.countedState = counted
            for scanned in scan.files {
                guard let digest = KeyDigest(hex: scanned.name), let line = summaries[digest],
                    scanned.bytes < 0 || line.bytes == scanned.bytes
                else {
                    // Not described by the index: its size and age decide, as for any stray file.
                    var file = scanned
                    if file.bytes < 0 {
                        var info = stat()
                        let found = entries.with(bucket, create: false) {
                            fstatat($0, scanned.name, &info, AT_SYMLINK_NOFOLLOW) == 0
                        }
                        guard found else { continue }
                        file = ScannedFile(
                            name: scanned.name, bytes: Int64(info.st_size),
                            modifiedAt: FileTime.nanoseconds(info.st_mtim),
                            inode: UInt64(info.st_ino))
                    }
                    sweep.broken.append(file)
                    continue
                }
                let file = ScannedFile(
                    name: scanned.name, bytes: line.bytes, modifiedAt: scanned.modifiedAt, inode: scanned.inode)
                sweep.live.append(
                    SweptEntry(
                        bucket: bucket, digest: digest, file: file, storedAt: line.storedAt, accessedAt: line.usedAt,
                        lineBytes: line.lineBytes))
            }
            sweep.isCompact = isCompact && sweep.live.count == summaries.count && sweep.broken.isEmpty
            return sweep
        }
        let scan = entries.with(bucket, create: false) { CacheScan.bucket($0) }
        sweep.temporaries = scan.temporaries
        sweep.strays = scan.strays
        guard !scan.files.isEmpty else { return sweep }
        let (records, counted) = index.entries(bucket)
        sweep.countedState = counted
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

    // MARK: - Removing

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
        for fake in CacheScan.fakeBuckets(in: contents.parent.value)
        where CacheScan.removeStray(fake, in: contents.parent.value) {
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

    /// One bucket's share of a removal.
    private struct Removal: Sendable {
        var report = CleanReport()
        var urls: [(position: Int, url: String)] = []
        var digests = Set<KeyDigest>()
    }

    /// Deletes bucket `bucket`'s `victims` and `broken` files, a batch per lock hold, each
    /// checked again under the lock: a file replaced since the sweep is kept and counted as
    /// remaining. `urls` keeps the victims' order.
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
        let records = listing ? index.entries(bucket).entries : [:]
        for start in stride(from: 0, to: items.count, by: Self.removalBatch) {
            bucketLock(bucket).withLock {
                // An index untouched since the sweep proves no file of the bucket was replaced
                // (see CacheIndex.fileState), which spares a stat per file.
                let untouched = indexState != nil && index.fileState(bucket) == indexState
                for (position, item) in items[start..<min(start + Self.removalBatch, items.count)] {
                    // Still the file swept (same inode): one replaced since is kept. Its size is
                    // not asked: an entry chosen to go goes, edited or not. Its links say
                    // whether its file goes with it (the entry's name and a content name).
                    var info = stat()
                    let found = fstatat(folder, item.file.name, &info, AT_SYMLINK_NOFOLLOW) == 0
                    if found, untouched || UInt64(info.st_ino) == item.inode, unlinkat(folder, item.file.name, 0) == 0 {
                        removal.report.removedEntries += 1
                        removal.report.removedBytes += info.st_nlink <= 2 ? item.bytes : item.bytes - item.fileBytes
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

    /// Removes temporary files left in `tmp/`, `index/` and `usage/` by crashed writers
    /// (unlocked, see ``WriterTemporary``, or last modified before `limit`, ns since 1970),
    /// and anything there that is not a regular file.
    func removeStrayTemporaries(olderThan limit: Int64, dryRun: Bool) -> Int {
        var removed = 0
        for folder in [temporary.value, index.folder.value, index.usage.value] where folder >= 0 {
            let scan = CacheScan.bucket(folder)
            for file in scan.temporaries
            where WriterTemporary.isAbandoned(file, in: folder, orBefore: limit, grace: waits.writerGrace) {
                if dryRun || unlinkat(folder, file.name, 0) == 0 { removed += 1 }
            }
            for stray in scan.strays where Buckets.index(named: stray) == nil || folder != temporary.value {
                if dryRun || CacheScan.removeStray(stray, in: folder) { removed += 1 }
            }
        }
        return removed
    }
}
