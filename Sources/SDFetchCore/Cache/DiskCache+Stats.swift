import Foundation

/// What `sdfetch stats` reports about a cache directory.
public struct CacheStats: Sendable, Equatable {
    /// Entries whose file matches its record.
    public var entries = 0
    /// Every byte of those entries: files and index lines (`st_size`, not blocks).
    public var bytes: Int64 = 0
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
    public static func stats(directory: String, now: Date) throws(CacheError) -> CacheStats {
        let cache = try DiskCache(directory: directory, now: { now }, readOnly: true)
        var stats = CacheStats()
        for sweep in ShardWorkers.map(Array(0..<Shards.count), { cache.sweep($0) }) {
            for item in sweep.live {
                stats.entries += 1
                stats.bytes += item.bytes
                stats.formats[item.entry.format, default: 0] += 1
                stats.oldest = min(stats.oldest ?? item.entry.storedAt, item.entry.storedAt)
                stats.newest = max(stats.newest ?? item.entry.storedAt, item.entry.storedAt)
            }
            stats.strays += sweep.broken.count + sweep.temporaries.count + sweep.strays.count
        }
        stats.failed = FailureBlacklist(cache: cache).count()
        return stats
    }
}
