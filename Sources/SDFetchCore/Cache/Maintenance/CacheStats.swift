import FoundationEssentials

/// What `sdfetch stats` reports about a cache directory.
public struct CacheStats: Sendable, Equatable {
    /// Entries whose file matches its record.
    public var entries = 0
    /// Every byte of those entries: files and index lines (`st_size`, not blocks), what
    /// `--max-cache-size` and `clean` count; a file that entries share counts once.
    public var bytes: Int64 = 0
    /// The images alone (their files' bytes, each file once), what `verify` checks.
    public var imageBytes: Int64 = 0
    /// The bytes that entries with identical images do not take because they share one file
    /// (``ContentFile``): what a cache without sharing would hold more.
    public var savedBytes: Int64 = 0
    public var formats: [ImageFormat: Int] = [:]
    /// Earliest and latest stored time among the entries; nil when there are none.
    public var oldest: Date?
    public var newest: Date?
    /// Blacklist records, expired or not.
    public var failed = 0
    /// Files in entry folders that are not entries (no record, other bytes, temporaries),
    /// content files no entry links (as after a `cp -r` copy) and anything that is not a
    /// regular file (links, FIFOs): `clean` removes them.
    public var strays = 0

    public init() {}
}
