import FoundationEssentials

extension RemoteTier {
    /// The run's remotes, or nil: none named, or `--offline` (which asks nothing).
    convenience init?(options: FetchOptions) {
        guard !options.remoteCache.urls.isEmpty, !options.offline else { return nil }
        self.init(options: options.remoteCache, connection: options.connection, userAgent: options.userAgent)
    }
}

extension Fetcher {
    /// The remote step after a local miss (SDFetchCore.docc, Fetching, "Remote cache"): the
    /// first remote record that is fresh, within `--max-bytes` and the pin, whose bytes
    /// match it and verify as a download's would, is stored as the local entry (with the
    /// record's stored time and validators) and served `cached`. Nil: the origin next.
    /// `--refresh` asks the origin, not a copy of it.
    func remoteResult(_ key: URLKey, spelling: String, pin: String?, clearingRecord: Bool) async -> FetchResult? {
        guard let remote, !options.refresh else { return nil }
        let (policy, maxBytes, lookedUp) = (servePolicy, options.maxBytes, now())
        let found = await remote.lookup(key) { record in
            record.bytes <= maxBytes && (pin == nil || record.sha256 == pin)
                && policy.allows(storedAt: record.storedDate, now: lookedUp)
        }
        guard let hit = found else { return nil }
        let image: VerifiedImage
        switch ImageVerifier(mode: options.verify, maxPixels: options.maxPixels).verify(hit.bytes) {
        case .success(let verified): image = verified
        case .failure(let failure):
            remote.refused(hit, failure)
            note(
                spelling,
                "the remote cache \(remote.name(of: hit)) sent bytes that fail verification: \(failure.kind.label)")
            return nil
        }
        let record = hit.record
        let date = now()
        let entry = CacheEntry(
            url: key.redacted, storedAt: min(record.storedDate, date), accessedAt: date,
            etag: DiskCache.keepable(record.etag), lastModified: DiskCache.keepable(record.lastModified),
            format: image.format, bytes: record.bytes, width: image.width, height: image.height,
            sha256: record.sha256, stamp: EntryFile.stamp(for: date))
        do throws(FetchFailure) {
            let write = { @Sendable [cache] (waiting: Bool) throws(FetchFailure) -> CacheEntry? in
                try cache.write(entry, key.digest, bytes: hit.bytes, waitingForLock: waiting)
            }
            var stored = try write(false)
            if stored == nil { stored = try await files.run { () throws(FetchFailure) in try write(true) } }
            guard let stored else { preconditionFailure("a write that may wait always writes") }
            remote.served(hit)
            if clearingRecord { blacklist.remove([key]) }
            note(spelling, "served by the remote cache \(remote.name(of: hit))")
            var result = cachedResult(stored, key: key, spelling: spelling, status: .cached)
            result.remote = remote.name(of: hit)
            return result
        } catch {
            return failedResult(key, spelling: spelling, error, httpStatus: nil)
        }
    }
}
