import SDFetchCore

/// `--max-cache-size`: trims the cache after a fetch run, keeping this run's entries to last.
enum CacheLimit {
    /// What the trim did; nil when it failed (said on the console).
    @discardableResult
    static func enforce(
        on cache: DiskCache, maxBytes: Int64, protecting keys: Set<KeyDigest>, console: Console
    ) async -> CleanReport? {
        do throws(CacheError) {
            return try await cache.trim(to: maxBytes, protecting: keys)
        } catch {
            console.error("sdfetch: cannot trim the cache to \(HumanReadable.bytes(maxBytes)): \(Escaping.terminal(error.description))\n")
            return nil
        }
    }
}
