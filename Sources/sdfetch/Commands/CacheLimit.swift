import SDFetchCore

/// `--max-cache-size`: trims the cache after a fetch run, keeping this run's entries to last.
enum CacheLimit {
    static func enforce(on cache: DiskCache, maxBytes: Int64, protecting keys: Set<KeyDigest>, console: Console) {
        do throws(CacheError) {
            _ = try cache.enforceLimit(maxBytes: maxBytes, protecting: keys)
        } catch {
            console.error("sdfetch: cannot trim the cache to \(HumanReadable.bytes(maxBytes)): \(Escaping.terminal(error.description))\n")
        }
    }
}
