import SDFetchCore

/// `--max-cache-size`: trims the cache after a fetch run, keeping this run's entries to last.
enum CacheLimit {
    /// Said under `-v` when another process holds the maintenance lock: the trim never waits.
    static let deferredNote =
        "sdfetch: cache trim left for the next run or `sdfetch clean`: another sdfetch holds the cache's maintenance lock\n"

    /// What the trim did; nil when it failed (said on the console).
    @discardableResult
    static func enforce(
        on cache: DiskCache, maxBytes: Int64, protecting keys: KeyDigestSet, verbose: Bool = false, console: Console
    ) async -> CleanReport? {
        do throws(CacheError) {
            let report = try await cache.trim(to: maxBytes, protecting: keys)
            if report.wasDeferred && verbose { console.error(deferredNote) }
            return report
        } catch {
            console.error(
                "sdfetch: cannot trim the cache to \(HumanReadable.bytes(maxBytes)): \(Escaping.terminal(error.description))\n"
            )
            return nil
        }
    }
}
