import FoundationEssentials

extension DiskCache {
    /// Statistics of the cache at `directory`, read without locking and without creating
    /// anything: a directory that does not exist yet reports zeros.
    ///
    /// - Throws: ``CacheError`` when the path is not a directory, cannot be read, or holds
    ///   another format version.
    public static func stats(directory: String) throws(CacheError) -> CacheStats {
        let cache = try DiskCache(directory: directory, readOnly: true)
        let partials = BucketWorkers.map(Array(0..<Buckets.count)) { bucket in
            var stats = CacheStats()
            // Inode and size of each entry's file, 16 bytes an entry: what finds shared files.
            var items: [(inode: UInt64, bytes: Int64)] = []
            let sweep = cache.sweep(bucket) { item, entry in
                stats.entries += 1
                stats.bytes += item.bytes
                stats.imageBytes += entry.bytes
                stats.formats[entry.format, default: 0] += 1
                stats.oldest = min(stats.oldest ?? entry.storedAt, entry.storedAt)
                stats.newest = max(stats.newest ?? entry.storedAt, entry.storedAt)
                items.append((item.inode, item.fileBytes))
            }
            stats.strays = sweep.broken.count + sweep.temporaries.count + sweep.strays.count
            cache.contents.with(bucket, create: false) { folder in
                ContentFile.forEach(in: folder) { name, info in
                    if ContentFile.isUnused(name, info) { stats.strays += 1 }
                }
            }
            return (stats, items)
        }
        var stats = CacheStats()
        // Files that entries share count once (see ``ContentFile``).
        let footprint = SharedFiles.footprint(
            lines: partials.reduce(0) { $0 + $1.0.bytes }, files: partials.flatMap(\.1))
        for (partial, _) in partials {
            stats.entries += partial.entries
            stats.bytes += partial.bytes
            stats.imageBytes += partial.imageBytes
            stats.formats.merge(partial.formats, uniquingKeysWith: +)
            stats.oldest = [stats.oldest, partial.oldest].compactMap { $0 }.min()
            stats.newest = [stats.newest, partial.newest].compactMap { $0 }.max()
            stats.strays += partial.strays
        }
        stats.savedBytes = stats.bytes - footprint
        stats.bytes = footprint
        stats.imageBytes -= stats.savedBytes
        stats.failed = FailureBlacklist(cache: cache).count()
        return stats
    }
}
