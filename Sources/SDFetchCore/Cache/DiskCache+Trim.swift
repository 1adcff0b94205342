extension DiskCache {
    /// ``enforceLimit(maxBytes:protecting:listing:)`` on a thread of its own, for async
    /// callers: the trim may wait for another process's `clean` to release the cache, and
    /// must not park a thread of the cooperative pool meanwhile. What the CLI's
    /// `--max-cache-size` and ``Fetcher/keepCacheCap(after:)`` run after a fetch run.
    public func trim(to maxBytes: Int64, protecting keys: Set<KeyDigest>) async throws(CacheError) -> CleanReport {
        try await BlockingWork.run("sdfetch-trim") { () throws(CacheError) in
            try self.enforceLimit(maxBytes: maxBytes, protecting: keys, listing: false)
        }
    }
}
