import FoundationEssentials

/// Why a URL is on the failed-URL blacklist (<doc:Fetching#Failed-URL-blacklist>).
///
/// On disk (`failed/ab/<digest>`, see ``LineRecord``), in this order: `sdfetch-failure 1`,
/// URL (the key's text), record time (ns since 1970), error kind label, detail, `end`. The
/// file's mtime mirrors the record time so `clean` finds expired records with `stat` alone.
public struct FailureRecord: Sendable, Equatable {
    /// The key's normalised URL text.
    public var url: String
    /// Always a kind whose ``FetchFailure/Kind/isPermanent`` is true.
    public var kind: FetchFailure.Kind
    public var detail: String
    public var recordedAt: Date

    public init(url: String, kind: FetchFailure.Kind, detail: String, recordedAt: Date) {
        self.url = url
        self.kind = kind
        self.detail = detail
        self.recordedAt = recordedAt
    }

    /// The failure this record stands for, carried by a `skipped` result.
    public var failure: FetchFailure { FetchFailure(kind, detail) }

    /// The HTTP status the recorded failure answered with, when its kind is one (`http-404`);
    /// the kind keeps it, so the record file needs no field of its own.
    public var httpStatus: Int? {
        if case .http(let code) = kind { return code }
        return nil
    }

    /// Whether the record still applies: fresh under `--max-age` (``Freshness``).
    public func isActive(now: Date, maxAge: Duration) -> Bool {
        Freshness(maxAge: maxAge).isFresh(recordedAt, now: now)
    }

    // MARK: - Record file

    static let magic = "sdfetch-failure 1"
    static let fieldCount = 4

    var fileBytes: [UInt8] {
        LineRecord.encode(magic: Self.magic, [url, LineRecord.encode(recordedAt), kind.label, detail])
    }

    /// Parses a record file; nil for anything malformed.
    init?(fileBytes bytes: UnsafeRawBufferPointer) {
        guard let fields = LineRecord.decode(magic: Self.magic, count: Self.fieldCount, from: bytes),
            !fields[0].isEmpty, let url = LineRecord.string(bytes, fields[0]),
            let recordedAt = LineRecord.date(bytes, fields[1]),
            let label = LineRecord.string(bytes, fields[2]), let kind = FetchFailure.Kind(label: label),
            let detail = LineRecord.string(bytes, fields[3])
        else { return nil }
        self.init(url: url, kind: kind, detail: detail, recordedAt: recordedAt)
    }
}
