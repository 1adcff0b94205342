import Foundation

/// What `sdfetch stats` reports about a cache directory.
public struct CacheStats: Sendable, Equatable {
    /// Complete entries (a body with its metadata).
    public var entries = 0
    /// Every byte of those entries' files, metadata included (`st_size`, not blocks).
    public var bytes: Int64 = 0
    public var formats: [ImageFormat: Int] = [:]
    /// Earliest and latest stored time among the entries; nil when there are none.
    public var oldest: Date?
    public var newest: Date?
    /// Blacklist records, expired or not.
    public var failed = 0

    public init() {}
}

extension DiskCache {
    /// Statistics of the cache at `directory`, read without locking and without creating
    /// anything: a directory that does not exist yet reports zeros.
    ///
    /// Reads every entry's record (for formats and stored times); `now` is accepted for
    /// callers that want age-relative figures and is not needed for the current fields.
    ///
    /// - Throws: ``CacheError`` when the directory exists but cannot be read.
    public static func stats(directory: String, now: Date) throws(CacheError) -> CacheStats {
        var stats = CacheStats()
        var info = stat()
        guard stat(directory, &info) == 0 else {
            if errno == ENOENT { return stats }
            throw CacheError(path: directory, detail: errnoText())
        }
        let entriesDirectory = directory + "/entries"
        if stat(entriesDirectory, &info) == 0 {
            var shards: [String] = []
            guard
                CacheScan.forEachName(
                    in: entriesDirectory,
                    { _, name in
                        if CacheScan.isShard(name) { shards.append(name) }
                    })
            else {
                throw CacheError(path: directory, detail: "cannot read \(entriesDirectory): \(errnoText())")
            }
            for partial in ShardWorkers.map(shards, { shardStats(entriesDirectory, $0) }) {
                stats.entries += partial.entries
                stats.bytes += partial.bytes
                stats.formats.merge(partial.formats, uniquingKeysWith: +)
                stats.oldest = [stats.oldest, partial.oldest].compactMap { $0 }.min()
                stats.newest = [stats.newest, partial.newest].compactMap { $0 }.max()
            }
        }
        stats.failed = CacheScan.records(in: directory + "/failed").count
        return stats
    }

    /// The statistics of one shard folder's complete entries.
    private static func shardStats(_ entriesDirectory: String, _ shard: String) -> CacheStats {
        var stats = CacheStats()
        for item in CacheScan.entries(in: entriesDirectory, shard: shard).entries where item.isComplete {
            let path = "\(entriesDirectory)/\(shard)/\(item.name)"
            // An entry removed or damaged since the scan is not an entry.
            let entry: (format: ImageFormat, storedAt: Date)
            switch EntryFile.attribute(EntryFile.summaryAttribute, atPath: path, EntrySummary.init(decoding:)) {
            case .found(let summary): entry = (summary.format, summary.storedAt)
            case .damaged: continue
            case .absent:
                guard let whole = EntryFile.sidecar(path)?.entry else { continue }
                entry = (whole.format, whole.storedAt)
            }
            stats.entries += 1
            stats.bytes += item.bytes
            stats.formats[entry.format, default: 0] += 1
            stats.oldest = min(stats.oldest ?? entry.storedAt, entry.storedAt)
            stats.newest = max(stats.newest ?? entry.storedAt, entry.storedAt)
        }
        return stats
    }

    /// Removes files in `tmp/` last modified before `limit` (ns since 1970): left by writers
    /// that crashed. Younger ones may belong to a live writer and stay. Returns the count.
    func removeStrayTemporaries(olderThan limit: Int64, dryRun: Bool) -> Int {
        var stray: [String] = []
        CacheScan.forEachName(in: temporaryDirectory) { fd, name in
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                CacheScan.nanoseconds(info.st_mtim) < limit
            else { return }
            stray.append(name)
        }
        if dryRun { return stray.count }
        return stray.filter { unlink("\(temporaryDirectory)/\($0)") == 0 }.count
    }
}
