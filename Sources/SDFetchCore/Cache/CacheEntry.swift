import Foundation

/// One cached image's metadata, stored beside its body (SPEC "Disk cache").
public struct CacheEntry: Sendable, Equatable, Codable {
    public var url: String
    public var storedAt: Date
    public var accessedAt: Date
    public var etag: String?
    public var lastModified: String?
    public var format: ImageFormat
    /// Body size in bytes.
    public var bytes: Int64
    public var width: Int?
    public var height: Int?

    public init(
        url: String, storedAt: Date, accessedAt: Date, etag: String? = nil, lastModified: String? = nil,
        format: ImageFormat, bytes: Int64, width: Int? = nil, height: Int? = nil
    ) {
        self.url = url
        self.storedAt = storedAt
        self.accessedAt = accessedAt
        self.etag = etag
        self.lastModified = lastModified
        self.format = format
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// Whether a conditional request can revalidate it.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    public func isFresh(now: Date, maxAge: Duration) -> Bool {
        now.timeIntervalSince(storedAt) < maxAge.timeInterval
    }
}

extension Duration {
    /// Seconds as a `TimeInterval`, for date arithmetic.
    public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
