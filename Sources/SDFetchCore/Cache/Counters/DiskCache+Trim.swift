extension DiskCache {
    /// ``enforceLimit(maxBytes:protecting:listing:)`` on a thread of its own, for async
    /// callers: the trim reads counter files and may remove entries, blocking work that
    /// must not park a thread of the cooperative pool (it never waits for another
    /// process's `clean`: see ``CleanReport/wasDeferred``). What the CLI's
    /// `--max-cache-size` and ``Fetcher/keepCacheCap(after:)`` run after a fetch run.
    public func trim(to maxBytes: Int64, protecting keys: KeyDigestSet) async throws(CacheError) -> CleanReport {
        try await BlockingWork.run("sdfetch-trim") { () throws(CacheError) in
            try self.enforceLimit(maxBytes: maxBytes, protecting: keys, listing: false)
        }
    }
}
