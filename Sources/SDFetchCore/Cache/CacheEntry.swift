import FoundationEssentials

/// One cached image's metadata: everything an entry must keep across a copy of the cache
/// directory (<doc:OnDiskFormat>), stored as a `put` line of its bucket's index
/// (see ``IndexRecord``), never in the entry file, which holds exactly the image bytes.
///
/// Times are whole nanoseconds since 1970 in the record, so a decoded entry compares equal
/// to the one stored (``FileTime/normalized(_:)``).
public struct CacheEntry: Sendable, Equatable {
    /// The key's URL text, any password masked.
    public var url: String
    public var storedAt: Date
    /// Last use (LRU): the put time or a later `use` record, whichever is newer.
    public var accessedAt: Date
    public var etag: String?
    public var lastModified: String?
    public var format: ImageFormat
    /// Body size in bytes.
    public var bytes: Int64
    public var width: Int?
    public var height: Int?
    /// SHA-256 of the body, 64 lower-case hex digits: the self-check of `verify` and of a
    /// hit whose file lost its stamp (a `cp -r` copy).
    public var sha256: String
    /// The entry file's mtime in whole seconds, set when it was written. A file whose size
    /// and mtime still match was not written since; whole seconds survive `tar` and `zip`.
    public var stamp: Int64

    public init(
        url: String, storedAt: Date, accessedAt: Date, etag: String? = nil, lastModified: String? = nil,
        format: ImageFormat, bytes: Int64, width: Int? = nil, height: Int? = nil, sha256: String, stamp: Int64
    ) {
        self.url = url
        self.storedAt = FileTime.normalized(storedAt)
        self.accessedAt = FileTime.normalized(accessedAt)
        self.etag = etag
        self.lastModified = lastModified
        self.format = format
        self.bytes = bytes
        self.width = width
        self.height = height
        self.sha256 = sha256
        self.stamp = stamp
    }
}
