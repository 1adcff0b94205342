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
            // Files other entries name too (more links than an entry's and a content name),
            // by inode: as many as there are shared files, not entries.
            var shared: [UInt64: Int64] = [:]
            let sweep = cache.sweep(bucket) { item, entry in
                stats.entries += 1
                stats.bytes += item.bytes
                stats.imageBytes += entry.bytes
                stats.formats[entry.format, default: 0] += 1
                stats.oldest = min(stats.oldest ?? entry.storedAt, entry.storedAt)
                stats.newest = max(stats.newest ?? entry.storedAt, entry.storedAt)
                guard item.links > 2 else { return }
                if shared.updateValue(item.fileBytes, forKey: item.inode) != nil { stats.savedBytes += item.fileBytes }
            }
            stats.strays = sweep.broken.count + sweep.temporaries.count + sweep.strays.count
            cache.contents.with(bucket, create: false) { folder in
                ContentFile.forEach(in: folder) { name, info in
                    if ContentFile.isUnused(name, info) { stats.strays += 1 }
                }
            }
            return (stats, shared)
        }
        var stats = CacheStats()
        // Files that entries share count once (see ``ContentFile``).
        var shared: [UInt64: Int64] = [:]
        for (partial, files) in partials {
            stats.entries += partial.entries
            stats.bytes += partial.bytes
            stats.imageBytes += partial.imageBytes
            stats.savedBytes += partial.savedBytes
            stats.formats.merge(partial.formats, uniquingKeysWith: +)
            stats.oldest = [stats.oldest, partial.oldest].compactMap { $0 }.min()
            stats.newest = [stats.newest, partial.newest].compactMap { $0 }.max()
            stats.strays += partial.strays
            for (inode, bytes) in files where shared.updateValue(bytes, forKey: inode) != nil {
                stats.savedBytes += bytes
            }
        }
        stats.bytes -= stats.savedBytes
        stats.imageBytes -= stats.savedBytes
        stats.failed = FailureBlacklist(cache: cache).count()
        return stats
    }
}
