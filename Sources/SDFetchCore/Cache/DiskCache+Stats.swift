import FoundationEssentials

/// What `sdfetch stats` reports about a cache directory.
public struct CacheStats: Sendable, Equatable {
    /// Entries whose file matches its record.
    public var entries = 0
    /// Every byte of those entries: files and index lines (`st_size`, not blocks), what
    /// `--max-cache-size` and `clean` count.
    public var bytes: Int64 = 0
    /// The images alone (their files' bytes), what `verify` checks and a fetch downloads.
    public var imageBytes: Int64 = 0
    public var formats: [ImageFormat: Int] = [:]
    /// Earliest and latest stored time among the entries; nil when there are none.
    public var oldest: Date?
    public var newest: Date?
    /// Blacklist records, expired or not.
    public var failed = 0
    /// Files in entry folders that are not entries (no record, other bytes, temporaries) and
    /// anything that is not a regular file (links, FIFOs): `clean` removes them.
    public var strays = 0

    public init() {}
}

extension DiskCache {
    /// Statistics of the cache at `directory`, read without locking and without creating
    /// anything: a directory that does not exist yet reports zeros.
    ///
    /// - Throws: ``CacheError`` when the path is not a directory, cannot be read, or holds
    ///   another format version.
    public static func stats(directory: String) throws(CacheError) -> CacheStats {
        let cache = try DiskCache(directory: directory, readOnly: true)
        let partials = ShardWorkers.map(Array(0..<Shards.count)) { shard in
            var stats = CacheStats()
            let sweep = cache.sweep(shard) { item, entry in
                stats.entries += 1
                stats.bytes += item.bytes
                stats.imageBytes += entry.bytes
                stats.formats[entry.format, default: 0] += 1
                stats.oldest = min(stats.oldest ?? entry.storedAt, entry.storedAt)
                stats.newest = max(stats.newest ?? entry.storedAt, entry.storedAt)
            }
            stats.strays = sweep.broken.count + sweep.temporaries.count + sweep.strays.count
            return stats
        }
        var stats = CacheStats()
        for partial in partials {
            stats.entries += partial.entries
            stats.bytes += partial.bytes
            stats.imageBytes += partial.imageBytes
            stats.formats.merge(partial.formats, uniquingKeysWith: +)
            stats.oldest = [stats.oldest, partial.oldest].compactMap { $0 }.min()
            stats.newest = [stats.newest, partial.newest].compactMap { $0 }.max()
            stats.strays += partial.strays
        }
        stats.failed = FailureBlacklist(cache: cache).count()
        return stats
    }
}
