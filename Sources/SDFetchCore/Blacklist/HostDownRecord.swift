import FoundationEssentials

/// An origin found down by an earlier run, remembered for a short while in the cache directory
/// (``HostDownMemory``, <doc:OnDiskFormat#Host-down-records>).
///
/// On disk (`hosts/<digest>`, see ``LineRecord``), in this order: `sdfetch-host-down 2`, the
/// origin (``URLKey/origin``), the record time (ns since 1970), the kind of the failure that
/// ended it (`dns`, `timeout` or `connect`), its cause, `end`. The file's mtime mirrors the
/// record time, so `clean` finds old records with `stat` alone.
public struct HostDownRecord: Sendable, Equatable {
    /// The origin, `scheme://host` or `scheme://host:port`.
    public var host: String
    /// `dns` (its name does not resolve), `timeout` (no connection, or no answer, within
    /// the timeout) or `connect` (it turned connections away and answered nothing): the
    /// failures that cost a re-run a wait, a timeout's or the retries' backoff.
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

    /// Whether a host found down for `kind` is worth remembering: only what costs a wait
    /// (``HostHealth/newlyDownForMemory`` judges the evidence).
    static func isRemembered(_ kind: FetchFailure.Kind) -> Bool {
        kind == .dns || kind == .timeout || kind == .connect
    }

    /// The record file's name: the digest of the host, so any host text names a safe file.
    static func fileName(of host: String) -> String { KeyDigest(of: host).hex }

    // MARK: - Record file

    /// Version 1 keyed records by the host name alone: such records are not read.
    static let magic = "sdfetch-host-down 2"
    static let fieldCount = 4
    /// The longest origin kept: a DNS name is at most 253 bytes; a scheme, port and brackets
    /// add a few.
    static let maxHostLength = 300
    /// The longest cause kept, in bytes: curl's messages and a name fit with room to spare, and
    /// a run reading thousands of forged records holds kilobytes, not a file's 16 KiB each.
    static let maxCauseLength = 512
    /// The largest record file read: every field at its longest, with room.
    static let maxFileLength = 1024

    /// `cause` cut to ``maxCauseLength`` bytes at a character's end.
    static func bounded(_ cause: String) -> String {
        guard cause.utf8.count > maxCauseLength else { return cause }
        var length = 0
        let kept = cause.unicodeScalars.prefix { scalar in
            length += UTF8.width(scalar)
            return length <= maxCauseLength
        }
        return String(kept)
    }

    var fileBytes: [UInt8] {
        LineRecord.encode(magic: Self.magic, [host, LineRecord.encode(recordedAt), kind.label, Self.bounded(cause)])
    }

    /// Parses a record file; nil for anything malformed or for a kind never remembered.
    init?(fileBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maxFileLength,
            let fields = LineRecord.decode(magic: Self.magic, count: Self.fieldCount, from: bytes),
            !fields[0].isEmpty, fields[0].count <= Self.maxHostLength, fields[3].count <= Self.maxCauseLength,
            let host = LineRecord.string(bytes, fields[0]),
            let recordedAt = LineRecord.date(bytes, fields[1]),
            let label = LineRecord.string(bytes, fields[2]), let kind = FetchFailure.Kind(label: label),
            Self.isRemembered(kind), let cause = LineRecord.string(bytes, fields[3])
        else { return nil }
        self.init(host: host, kind: kind, cause: cause, recordedAt: recordedAt)
    }
}
