import Foundation

/// One cached image's metadata, kept with its body (SPEC "Disk cache", ``EntryFile``).
///
/// The record (see ``LineRecord``), in this order: `sdfetch-entry 1`, URL, stored time
/// (ns since 1970), format, body bytes, width, height, ETag, Last-Modified (empty when
/// absent), `end`. The access time is not in the record: it is the entry file's mtime, set
/// explicitly by the writer and by every hit (`futimens`), so a hit costs one timestamp
/// update instead of a rewrite, and `clean` reads LRU order with `stat` alone.
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

    // MARK: - Record

    static let magic = "sdfetch-entry 1"
    static let fieldCount = 8

    /// The record's bytes (the access time travels as the file's mtime).
    var metadata: [UInt8] {
        LineRecord.encode(
            magic: Self.magic,
            [
                url, LineRecord.encode(storedAt), format.rawValue, String(bytes), width.map(String.init) ?? "",
                height.map(String.init) ?? "", etag ?? "", lastModified ?? "",
            ])
    }

    /// The stored time (ns since 1970) of a record, read without parsing the rest: what
    /// `clean` needs of each entry.
    static func storedTime(inRecord bytes: UnsafeRawBufferPointer) -> Int64? {
        LineRecord.decode(magic: magic, count: fieldCount, from: bytes).flatMap { LineRecord.integer(bytes, $0[1]) }
    }

    /// Parses a record; nil for anything malformed.
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
        func optionalText(_ range: Range<Int>) -> String?? {
            range.isEmpty ? .some(nil) : LineRecord.string(bytes, range).map { .some($0) }
        }
        guard let width = optionalInt(fields[4]), let height = optionalInt(fields[5]),
            let etag = optionalText(fields[6]), let lastModified = optionalText(fields[7])
        else { return nil }
        self.init(
            url: url, storedAt: storedAt, accessedAt: accessedAt, etag: etag, lastModified: lastModified,
            format: format, bytes: size, width: width, height: height)
    }
}
