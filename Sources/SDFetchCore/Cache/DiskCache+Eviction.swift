import Foundation

/// What `clean` or `enforceLimit` removed (or, in a dry run, would remove) and what remains.
public struct CleanReport: Sendable, Equatable {
    public var removedEntries = 0
    /// Bytes of every removed entry (body and metadata) and orphaned half.
    public var removedBytes: Int64 = 0
    public var removedFailed = 0
    /// Stray temporary files and orphaned halves of entries left by crashed writers.
    public var removedTemp = 0
    /// Entries and their bytes remaining afterwards.
    public var entries = 0
    public var bytes: Int64 = 0
    /// URLs of the removed entries, in removal order (LRU order for trimmed ones).
    public var removedURLs: [String] = []
    /// `enforceLimit` knew the cache was within the cap without scanning it: nothing was
    /// removed, and `entries` and `bytes` were not counted.
    public var wasSkipped = false

    public init() {}
}

extension DiskCache {
    /// A temporary file older than this belongs to a crashed writer: live writes take
    /// seconds, so an hour leaves a wide margin for slow disks and huge bodies.
    static let strayTemporaryAge: Duration = .seconds(3600)

    /// SPEC `clean`: removes expired entries (stored more than `maxAge` ago), expired
    /// blacklist records and stray temporary files, then trims to `maxSize` bytes, least
    /// recently used first. With `dryRun` nothing is removed but the report is the same.
    /// Without `listing`, `removedURLs` stays empty, which saves reading each victim's URL.
    ///
    /// Idempotent, and safe while fetches run (see ``DirectoryLock``). Blocks while another
    /// `clean` or `enforceLimit` runs on the same directory.
    ///
    /// - Throws: ``CacheError`` when the entries directory cannot be read.
    public func clean(
        maxAge: Duration, maxSize: Int64?, dryRun: Bool, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        try maintenanceLock.withLock { () throws(CacheError) -> CleanReport in
            let nowNanoseconds = CacheScan.nanoseconds(now())
            let maxAgeNanoseconds = Int64(maxAge.timeInterval * 1e9)
            let strayLimit = nowNanoseconds - Int64(Self.strayTemporaryAge.timeInterval * 1e9)
            var report = CleanReport()
            let scanned = try scan()
            report.removedTemp =
                removeStrayTemporaries(olderThan: strayLimit, dryRun: dryRun)
                + removeShardTemporaries(scanned.temporaries.filter { $0.modifiedAt < strayLimit }, dryRun: dryRun)
            var kept: [ScannedEntry] = []
            var victims: [ScannedEntry] = []
            for entry in scanned.entries {
                if entry.isComplete && entry.storedAt > nowNanoseconds - maxAgeNanoseconds {
                    kept.append(entry)
                } else if entry.hasBody || entry.sidecarWrittenAt < strayLimit {
                    // A young sidecar without its body may be a store in progress: left alone.
                    victims.append(entry)
                }
            }
            if let maxSize { victims += Self.leastRecentlyUsed(&kept, over: maxSize, protecting: []) }
            remove(victims, dryRun: dryRun, listing: listing, into: &report)
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            if let maxSize, !dryRun { recordWithin(maxSize) }
            report.removedFailed = removeExpiredRecords(
                recordedUpTo: nowNanoseconds - maxAgeNanoseconds, dryRun: dryRun)
            return report
        }
    }

    /// SPEC `--max-cache-size`: trims the cache to `maxBytes`, least recently used first,
    /// entries in `keys` (those used by the current run) last. Call it after a fetch run.
    ///
    /// Costs one `stat` per file, unless nothing was stored since the last trim to a cap no
    /// larger (see ``isKnownWithin(_:)``); expired entries are left for `clean`. `listing`
    /// as for ``clean(maxAge:maxSize:dryRun:listing:)``.
    ///
    /// - Throws: ``CacheError`` when the entries directory cannot be read.
    public func enforceLimit(
        maxBytes: Int64, protecting keys: Set<KeyDigest>, listing: Bool = true
    ) throws(CacheError) -> CleanReport {
        try maintenanceLock.withLock { () throws(CacheError) -> CleanReport in
            var report = CleanReport()
            if isKnownWithin(maxBytes) {
                report.wasSkipped = true
                return report
            }
            var kept = try scan().entries.filter(\.isComplete)
            let victims = Self.leastRecentlyUsed(&kept, over: maxBytes, protecting: keys)
            remove(victims, dryRun: false, listing: listing, into: &report)
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            recordWithin(maxBytes)
            return report
        }
    }

    // MARK: - Planning

    private func scan() throws(CacheError) -> EntriesScan {
        guard let entries = CacheScan.entries(in: entriesDirectory) else {
            throw CacheError(path: directory, detail: "cannot read \(entriesDirectory): \(errnoText())")
        }
        return entries
    }

    /// Moves the least recently used of `kept` out until the rest fit in `maxBytes`;
    /// entries whose digest is in `protected` go only after all others.
    static func leastRecentlyUsed(
        _ kept: inout [ScannedEntry], over maxBytes: Int64, protecting protected: Set<KeyDigest>
    ) -> [ScannedEntry] {
        var total = kept.reduce(0) { $0 + $1.bytes }
        guard total > maxBytes else { return [] }
        let ranked = kept.map { entry in
            (entry, isProtected: !protected.isEmpty && KeyDigest(hex: entry.name).map(protected.contains) == true)
        }
        .sorted { lhs, rhs in
            lhs.isProtected != rhs.isProtected ? !lhs.isProtected : lhs.0.accessedAt < rhs.0.accessedAt
        }
        var index = 0
        while total > maxBytes && index < ranked.count {
            total -= ranked[index].0.bytes
            index += 1
        }
        kept = ranked[index...].map(\.0)
        return ranked[..<index].map(\.0)
    }

    // MARK: - Removing

    /// Deletes `victims` shard by shard (shards in parallel, see ``ShardWorkers``), a batch
    /// per lock hold, each checked again under the lock: an entry replaced or used since
    /// the scan is kept and counted as remaining. `removedURLs` keeps the victims' order
    /// (expired first, then least recently used).
    private func remove(_ victims: [ScannedEntry], dryRun: Bool, listing: Bool, into report: inout CleanReport) {
        let byShard = Dictionary(grouping: victims.indices, by: { victims[$0].shard })
        let partials = ShardWorkers.map(byShard.keys.sorted()) { shard in
            self.remove(byShard[shard]!.map { ($0, victims[$0]) }, in: shard, dryRun: dryRun, listing: listing)
        }
        var removedURLs: [(position: Int, url: String)] = []
        for partial in partials {
            report.entries += partial.report.entries
            report.bytes += partial.report.bytes
            report.removedEntries += partial.report.removedEntries
            report.removedBytes += partial.report.removedBytes
            report.removedTemp += partial.report.removedTemp
            removedURLs += partial.urls
        }
        report.removedURLs += removedURLs.sorted { $0.position < $1.position }.map(\.url)
    }

    /// One shard's share of a removal: counts, and removed URLs with their victim position.
    private struct Removal: Sendable {
        var report = CleanReport()
        var urls: [(position: Int, url: String)] = []
    }

    private func remove(_ items: [(Int, ScannedEntry)], in shard: String, dryRun: Bool, listing: Bool) -> Removal {
        var removal = Removal()
        func account(_ position: Int, _ item: ScannedEntry, removedURL: String?) {
            guard let removedURL else {
                if item.isComplete {
                    removal.report.entries += 1
                    removal.report.bytes += item.bytes
                }
                return
            }
            removal.report.removedBytes += item.bytes
            if item.isComplete {
                removal.report.removedEntries += 1
                if listing { removal.urls.append((position, removedURL)) }
            } else {
                removal.report.removedTemp += 1
            }
        }
        for start in stride(from: 0, to: items.count, by: Self.removalBatch) {
            let batch = items[start..<min(start + Self.removalBatch, items.count)]
            if dryRun {
                for (position, item) in batch {
                    account(position, item, removedURL: item.isComplete && listing ? url(of: item) ?? item.name : "")
                }
            } else {
                shardLock(shard).withLock {
                    for (position, item) in batch {
                        account(position, item, removedURL: removeNow(item, listing: listing))
                    }
                }
            }
        }
        return removal
    }

    /// Removes one scanned entry if it is still what the scan saw; call under its shard lock.
    /// Returns the removed entry's URL (empty for an orphaned half, or without `listing`),
    /// nil when it was kept.
    private func removeNow(_ item: ScannedEntry, listing: Bool) -> String? {
        let body = "\(entriesDirectory)/\(item.shard)/\(item.name)"
        let sidecar = body + EntryFile.sidecarSuffix
        // A sidecar whose body is gone: its store crashed, or a removal stopped halfway.
        if !item.hasBody { return CacheScan.isMissing(body) && unlink(sidecar) == 0 ? "" : nil }
        guard CacheScan.isUnchanged(body, as: item) else { return nil }
        // A body without metadata (readdir may have missed a sidecar written since: look again).
        if !item.hasMetadata {
            let summary = EntryFile.attribute(EntryFile.summaryAttribute, atPath: body) { _ in () }
            let isOrphan = summary.isAbsent && CacheScan.isMissing(sidecar)
            return isOrphan && unlink(body) == 0 ? "" : nil
        }
        let url = listing ? url(of: item) ?? item.name : ""
        // The body goes first so the entry vanishes at once; a crash here leaves a sidecar
        // without body, which the next `clean` removes.
        guard unlink(body) == 0 else { return nil }
        if item.hasSidecar { unlink(sidecar) }
        return url
    }

    private func url(of item: ScannedEntry) -> String? {
        let path = "\(entriesDirectory)/\(item.shard)/\(item.name)"
        let origin = EntryFile.attribute(EntryFile.originAttribute, atPath: path) { origin in
            LineRecord.decode(magic: CacheEntry.originMagic, count: 3, from: origin).flatMap {
                LineRecord.string(origin, $0[0])
            }
        }
        switch origin {
        case .found(let url): return url
        case .absent: return EntryFile.sidecar(path)?.entry.url
        case .damaged: return nil
        }
    }

    /// Removes temporary files left in shard folders by crashed writers; returns the count.
    private func removeShardTemporaries(_ stray: [ScannedTemporary], dryRun: Bool) -> Int {
        if dryRun { return stray.count }
        return stray.filter { unlink("\(entriesDirectory)/\($0.shard)/\($0.name)") == 0 }.count
    }
}
