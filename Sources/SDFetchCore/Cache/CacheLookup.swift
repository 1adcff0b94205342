import FoundationEssentials

/// What the cache-lookup step found for one key: the one probe of a URL's way
/// (<doc:OnDiskFormat> decisions), handed on to the network step so a miss is never probed
/// again.
public enum CacheLookup: Sendable {
    /// A servable entry, its file intact and its use noted: the answer, without a request.
    case fresh(CacheEntry)
    /// A record that may not be served as is (stale, or `--refresh`): its validators make
    /// the request conditional once its file is checked (``DiskCache/checked(_:for:)``).
    case stale(CacheEntry)
    /// No entry, or one whose file no longer holds its bytes.
    case miss
}
