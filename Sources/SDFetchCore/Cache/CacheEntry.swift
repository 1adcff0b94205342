import Foundation

/// One cached image's metadata, kept with its body (SPEC "Disk cache", ``EntryFile``).
///
/// In extended attributes it is two records: the ``EntrySummary`` and the origin record
/// (``LineRecord`` `sdfetch-origin 1`: URL, ETag, Last-Modified). In a sidecar file it is
/// one line record, in this order: `sdfetch-entry 1`, URL, stored time (ns since 1970),
/// format, body bytes, width, height, ETag, Last-Modified (empty when absent), `end`. The
/// access time is in neither: it is the entry file's mtime, set explicitly by the writer
/// and by every hit (`futimens`), so a hit costs one timestamp update instead of a rewrite,
/// and `clean` reads LRU order with `stat` alone.
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

    /// Whether an entry stored at `storedAt` is fresh at `now` (SPEC: stored time +
    /// `--max-age`), for callers holding only a summary.
    public static func isFresh(storedAt: Date, now: Date, maxAge: Duration) -> Bool {
        now.timeIntervalSince(storedAt) < maxAge.timeInterval
    }

    // MARK: - Records

    /// What a hit needs, in the form kept inside the inode (see ``EntrySummary``).
    func summary(originBytes: Int) -> EntrySummary {
        EntrySummary(
            storedAt: storedAt, format: format, bytes: bytes, width: width, height: height, originBytes: originBytes)
    }

    static let originMagic = "sdfetch-origin 1"

    /// The rest, kept beside the summary: URL, ETag and Last-Modified (empty when absent).
    var originRecord: [UInt8] {
        LineRecord.encode(magic: Self.originMagic, [url, etag ?? "", lastModified ?? ""])
    }

    /// Joins a summary and an origin record; nil when the origin record is malformed.
    init?(summary: EntrySummary, origin bytes: UnsafeRawBufferPointer, accessedAt: Date) {
        guard let fields = LineRecord.decode(magic: Self.originMagic, count: 3, from: bytes), !fields[0].isEmpty,
            let url = LineRecord.string(bytes, fields[0]), let etag = Self.optionalText(bytes, fields[1]),
            let lastModified = Self.optionalText(bytes, fields[2])
        else { return nil }
        self.init(
            url: url, storedAt: summary.storedAt, accessedAt: accessedAt, etag: etag, lastModified: lastModified,
            format: summary.format, bytes: summary.bytes, width: summary.width, height: summary.height)
    }

    /// An optional text field: `.some(nil)` when empty, nil when not UTF-8.
    private static func optionalText(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String?? {
        range.isEmpty ? .some(nil) : LineRecord.string(bytes, range).map { .some($0) }
    }

    static let magic = "sdfetch-entry 1"
    static let fieldCount = 8

    /// The whole record in one, as a sidecar file keeps it (the access time travels as the
    /// entry file's mtime).
    var metadata: [UInt8] {
        LineRecord.encode(
            magic: Self.magic,
            [
                url, LineRecord.encode(storedAt), format.rawValue, String(bytes), width.map(String.init) ?? "",
                height.map(String.init) ?? "", etag ?? "", lastModified ?? "",
            ])
    }

    /// Parses a whole record; nil for anything malformed.
    init?(metadata bytes: UnsafeRawBufferPointer, accessedAt: Date) {
        guard let fields = LineRecord.decode(magic: Self.magic, count: Self.fieldCount, from: bytes),
            !fields[0].isEmpty, let url = LineRecord.string(bytes, fields[0]),
            let storedAt = LineRecord.date(bytes, fields[1]),
            let format = ImageFormat.allCases.first(where: { bytes[fields[2]].elementsEqual($0.rawValue.utf8) }),
            let size = LineRecord.integer(bytes, fields[3]), size >= 0
        else { return nil }
        func optionalInt(_ range: Range<Int>) -> Int?? {
            range.isEmpty ? .some(nil) : LineRecord.integer(bytes, range).map { .some(Int($0)) }
        }
        guard let width = optionalInt(fields[4]), let height = optionalInt(fields[5]),
            let etag = Self.optionalText(bytes, fields[6]), let lastModified = Self.optionalText(bytes, fields[7])
        else { return nil }
        self.init(
            url: url, storedAt: storedAt, accessedAt: accessedAt, etag: etag, lastModified: lastModified,
            format: format, bytes: size, width: width, height: height)
    }
}
