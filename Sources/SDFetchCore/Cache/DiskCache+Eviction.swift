import Foundation

/// What `clean` or `enforceLimit` removed (or, in a dry run, would remove) and what remains.
public struct CleanReport: Sendable, Equatable {
    public var removedEntries = 0
    /// Bytes of every removed file: entries (body and `.meta`) and orphaned bodies.
    public var removedBytes: Int64 = 0
    public var removedFailed = 0
    /// Stray temporary files and orphaned halves of entries left by crashed writers.
    public var removedTemp = 0
    /// Entries and their bytes remaining afterwards.
    public var entries = 0
    public var bytes: Int64 = 0
    /// URLs of the removed entries, in removal order (LRU order for trimmed ones).
    public var removedURLs: [String] = []

    public init() {}
}

extension DiskCache {
    /// A temporary file older than this belongs to a crashed writer: live writes take
    /// seconds, so an hour leaves a wide margin for slow disks and huge bodies.
    static let strayTemporaryAge: Duration = .seconds(3600)

    /// SPEC `clean`: removes expired entries (stored more than `maxAge` ago), expired
    /// blacklist records and stray temporary files, then trims to `maxSize` bytes, least
    /// recently used first. With `dryRun` nothing is removed but the report is the same.
    ///
    /// Idempotent, and safe while fetches run (see ``DirectoryLock``). Blocks while another
    /// `clean` or `enforceLimit` runs on the same directory.
    ///
    /// - Throws: ``CacheError`` when the entries directory cannot be read.
    public func clean(maxAge: Duration, maxSize: Int64?, dryRun: Bool) throws(CacheError) -> CleanReport {
        try maintenanceLock.withLock { () throws(CacheError) -> CleanReport in
            let nowNanoseconds = CacheScan.nanoseconds(now())
            let maxAgeNanoseconds = Int64(maxAge.timeInterval * 1e9)
            var report = CleanReport()
            report.removedTemp = removeStrayTemporaries(
                olderThan: nowNanoseconds - Int64(Self.strayTemporaryAge.timeInterval * 1e9), dryRun: dryRun)
            var kept: [ScannedEntry] = []
            var victims: [ScannedEntry] = []
            for entry in try scan() {
                if entry.isComplete && entry.storedAt > nowNanoseconds - maxAgeNanoseconds {
                    kept.append(entry)
                } else {
                    victims.append(entry)
                }
            }
            if let maxSize { victims += Self.leastRecentlyUsed(&kept, over: maxSize, protecting: []) }
            remove(victims, dryRun: dryRun, into: &report)
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            report.removedFailed = removeExpiredRecords(recordedUpTo: nowNanoseconds - maxAgeNanoseconds, dryRun: dryRun)
            return report
        }
    }

    /// SPEC `--max-cache-size`: trims the cache to `maxBytes`, least recently used first,
    /// entries in `keys` (those used by the current run) last. Call it after a fetch run.
    ///
    /// Costs one `stat` per file; expired entries are left for `clean`.
    ///
    /// - Throws: ``CacheError`` when the entries directory cannot be read.
    public func enforceLimit(maxBytes: Int64, protecting keys: Set<KeyDigest>) throws(CacheError) -> CleanReport {
        try maintenanceLock.withLock { () throws(CacheError) -> CleanReport in
            var kept = try scan().filter(\.isComplete)
            var report = CleanReport()
            let victims = Self.leastRecentlyUsed(&kept, over: maxBytes, protecting: keys)
            remove(victims, dryRun: false, into: &report)
            report.entries += kept.count
            report.bytes += kept.reduce(0) { $0 + $1.bytes }
            return report
        }
    }

    // MARK: - Planning

    private func scan() throws(CacheError) -> [ScannedEntry] {
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

    /// Deletes `victims` shard by shard, a batch per lock hold, each checked again under
    /// the lock: an entry replaced or used since the scan is kept and counted as remaining.
    /// `removedURLs` keeps the victims' order (expired first, then least recently used).
    private func remove(_ victims: [ScannedEntry], dryRun: Bool, into report: inout CleanReport) {
        var removedURLs: [(position: Int, url: String)] = []
        let byShard = Dictionary(grouping: victims.indices, by: { victims[$0].shard })
        for shard in byShard.keys.sorted() {
            let positions = byShard[shard]!
            for start in stride(from: 0, to: positions.count, by: Self.removalBatch) {
                let batch = positions[start..<min(start + Self.removalBatch, positions.count)]
                func account(_ position: Int, removedURL: String?) {
                    let item = victims[position]
                    guard let removedURL else {
                        if item.isComplete {
                            report.entries += 1
                            report.bytes += item.bytes
                        }
                        return
                    }
                    report.removedBytes += item.bytes
                    if item.isComplete {
                        report.removedEntries += 1
                        removedURLs.append((position, removedURL))
                    } else {
                        report.removedTemp += 1
                    }
                }
                if dryRun {
                    for position in batch {
                        let item = victims[position]
                        account(position, removedURL: item.isComplete ? url(of: item) ?? item.name : "")
                    }
                } else {
                    shardLock(shard).withLock {
                        for position in batch { account(position, removedURL: removeNow(victims[position])) }
                    }
                }
            }
        }
        report.removedURLs += removedURLs.sorted { $0.position < $1.position }.map(\.url)
    }

    /// Removes one scanned entry if it is still what the scan saw; call under its shard lock.
    /// Returns the removed entry's URL (empty for an orphaned half), nil when it was kept.
    private func removeNow(_ item: ScannedEntry) -> String? {
        let body = "\(entriesDirectory)/\(item.shard)/\(item.name)"
        let meta = body + ".meta"
        // Under the lock no store is between its renames, so a half seen alone by the scan
        // is an orphan, unless readdir merely missed the other half: look again.
        if !item.hasMeta { return CacheScan.isMissing(meta) && unlink(body) == 0 ? "" : nil }
        if !item.hasBody { return CacheScan.isMissing(body) && unlink(meta) == 0 ? "" : nil }
        guard CacheScan.isUnchanged(meta, as: item) else { return nil }
        let url = url(of: item) ?? item.name
        // The metadata goes first so the entry vanishes at once and a crash here leaves a
        // body without metadata (a miss), never metadata without a body.
        guard unlink(meta) == 0 else { return nil }
        unlink(body)
        return url
    }

    private func url(of item: ScannedEntry) -> String? {
        LineRecord.read("\(entriesDirectory)/\(item.shard)/\(item.name).meta") { bytes, _ in
            CacheEntry(metadata: bytes, accessedAt: Date())?.url
        }
    }
}
