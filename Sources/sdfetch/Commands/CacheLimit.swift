import SDFetchCore

/// `--max-cache-size`: trims the cache after a fetch run, keeping this run's entries to last.
enum CacheLimit {
    /// What the trim did; nil when it failed (said on the console).
    @discardableResult
    static func enforce(
        on cache: DiskCache, maxBytes: Int64, protecting keys: Set<KeyDigest>, console: Console
    ) async -> CleanReport? {
        do throws(CacheError) {
            // Off the cooperative pool: it may wait on the maintenance lock of a clean elsewhere.
            return try await BlockingWork.run("sdfetch-trim") { () throws(CacheError) in
                try cache.enforceLimit(maxBytes: maxBytes, protecting: keys, listing: false)
            }
        } catch {
            console.error("sdfetch: cannot trim the cache to \(HumanReadable.bytes(maxBytes)): \(Escaping.terminal(error.description))\n")
            return nil
        }
    }
}
