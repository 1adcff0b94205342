import FoundationEssentials

/// When an entry may be served without a request (`--max-age`, `--refresh`,
/// `--offline`; <doc:Fetching#Results>): a value the cache applies, not a callback into
/// the fetcher.
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
