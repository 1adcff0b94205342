import FoundationEssentials

/// What a remote keeps about one URL: enough to serve its image as a local entry would be
/// served, times and validators included (SDFetchCore.docc, Fetching, "Remote cache").
///
/// JSON, so that a person inspecting a remote can read it. Nothing in it is trusted: the
/// bytes it points to are hashed and verified before use, and a record for another key
/// (a digest collision, or garbage) is a miss.
struct RemoteRecord: Codable, Sendable, Equatable {
    /// The key's text, any password masked (``URLKey/redacted``).
    var key: String
    var sha256: String
    var bytes: Int64
    var format: String
    var width: Int?
    var height: Int?
    /// When the origin's answer was stored, seconds since 1970.
    var storedAt: Double
    var etag: String?
    var lastModified: String?

    init(_ entry: CacheEntry, key: URLKey) {
        self.key = key.redacted
        sha256 = entry.sha256
        bytes = entry.bytes
        format = entry.format.name
        width = entry.width
        height = entry.height
        storedAt = entry.storedAt.timeIntervalSince1970
        etag = entry.etag
        lastModified = entry.lastModified
    }

    /// The record read from `bytes`, nil when they are no record.
    static func decoded(_ bytes: [UInt8]) -> RemoteRecord? {
        try? JSONDecoder().decode(RemoteRecord.self, from: Data(bytes))
    }

    var encoded: [UInt8] {
        // A record is made only of strings and numbers: encoding cannot fail.
        (try? [UInt8](JSONEncoder().encode(self))) ?? []
    }

    var storedDate: Date { Date(timeIntervalSince1970: storedAt) }

    /// Whether the record can name an image at all: a digest of 64 lower-case hex digits,
    /// a size, a known format.
    var isWellFormed: Bool {
        sha256.utf8.count == 64 && sha256.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
            && bytes > 0 && ImageFormat(rawValue: format) != nil
    }
}
