import FoundationEssentials

/// What the cache-lookup step found for one key: the one probe of a URL's way (SPEC "Disk
/// cache" decisions), handed on to the network step so a miss is never probed again.
public enum CacheLookup: Sendable {
    /// A servable entry, its file intact and its use noted: the answer, without a request.
    case fresh(CacheEntry)
    /// A record that may not be served as is (stale, or `--refresh`): its validators make
    /// the request conditional once its file is checked (``DiskCache/checked(_:for:)``).
    case stale(CacheEntry)
    /// No entry, or one whose file no longer holds its bytes.
    case miss
}

/// When an entry may be served without a request (SPEC `--max-age`, `--refresh`,
/// `--offline`): a value the cache applies, not a callback into the fetcher.
public struct ServePolicy: Sendable {
    public var freshness: Freshness
    /// `--refresh`: nothing is served without asking the server.
    public var isRefreshing: Bool
    /// `--offline`: any entry is served, fresh or not.
    public var isOffline: Bool

    public init(freshness: Freshness, isRefreshing: Bool = false, isOffline: Bool = false) {
        self.freshness = freshness
        self.isRefreshing = isRefreshing
        self.isOffline = isOffline
    }

    /// Whether an entry stored at `storedAt` may be served at `now`.
    public func allows(storedAt: Date, now: Date) -> Bool {
        isOffline || (!isRefreshing && freshness.isFresh(storedAt, now: now))
    }
}
