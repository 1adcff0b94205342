import FoundationEssentials

/// A host found down by an earlier run, remembered for a short while in the cache directory
/// (``HostDownMemory``, <doc:OnDiskFormat#Host-down-records>).
///
/// On disk (`hosts/<digest>`, see ``LineRecord``), in this order: `sdfetch-host-down 1`, the
/// host (`host` or `host:port`, as in the URLs' keys), the record time (ns since 1970), the
/// kind of the failure that ended it (`dns` or `timeout`), its cause, `end`. The file's mtime
/// mirrors the record time, so `clean` finds old records with `stat` alone.
public struct HostDownRecord: Sendable, Equatable {
    public var host: String
    /// `dns` (its name does not resolve) or `timeout` (no connection, or no answer, within
    /// the timeout): the failures that cost a re-run a wait; a refused connection does not.
    public var kind: FetchFailure.Kind
    /// Lower-case, as ``DownHost/cause``: "its name does not resolve (...)".
    public var cause: String
    public var recordedAt: Date

    public init(host: String, kind: FetchFailure.Kind, cause: String, recordedAt: Date) {
        self.host = host
        self.kind = kind
        self.cause = cause
        self.recordedAt = recordedAt
    }

    /// Whether a host given up for `kind` is worth remembering: only what costs a wait.
    static func isRemembered(_ kind: FetchFailure.Kind) -> Bool {
        kind == .dns || kind == .timeout
    }

    /// The record file's name: the digest of the host, so any host text names a safe file.
    static func fileName(of host: String) -> String { KeyDigest(of: host).hex }

    // MARK: - Record file

    static let magic = "sdfetch-host-down 1"
    static let fieldCount = 4
    /// The longest host kept: a DNS name is at most 253 bytes; a port and brackets add a few.
    static let maxHostLength = 300

    var fileBytes: [UInt8] {
        LineRecord.encode(magic: Self.magic, [host, LineRecord.encode(recordedAt), kind.label, cause])
    }

    /// Parses a record file; nil for anything malformed or for a kind never remembered.
    init?(fileBytes bytes: UnsafeRawBufferPointer) {
        guard let fields = LineRecord.decode(magic: Self.magic, count: Self.fieldCount, from: bytes),
            !fields[0].isEmpty, fields[0].count <= Self.maxHostLength,
            let host = LineRecord.string(bytes, fields[0]),
            let recordedAt = LineRecord.date(bytes, fields[1]),
            let label = LineRecord.string(bytes, fields[2]), let kind = FetchFailure.Kind(label: label),
            Self.isRemembered(kind), let cause = LineRecord.string(bytes, fields[3])
        else { return nil }
        self.init(host: host, kind: kind, cause: cause, recordedAt: recordedAt)
    }
}
