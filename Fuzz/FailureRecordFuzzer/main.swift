import FoundationEssentials

@testable import SDFetchCore

/// libFuzzer entry point over a failed-URL record file (`failed/ab/DIGEST`,
/// <doc:OnDiskFormat>): the line-record layout every record file shares, and the failure
/// record on it, whose times and kinds come back into a run and into `merge`.
@_cdecl("LLVMFuzzerTestOneInput")
public func failureRecordFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    input.bytes.withUnsafeBytes { raw in
        if let record = FailureRecord(fileBytes: raw) {
            _ = record.isActive(now: Date(), maxAge: .seconds(86_400))
            _ = record.isActive(now: Date(timeIntervalSince1970: 0), maxAge: .seconds(365 * 86_400))
            // What a record says is written back as it was read (a merge copies it).
            _ = record.fileBytes.withUnsafeBytes { FailureRecord(fileBytes: $0) }
            _ = FetchFailure(record.kind, record.detail).kind.isPermanent
        }
        for count in 1...5 {
            guard let fields = LineRecord.decode(magic: FailureRecord.magic, count: count, from: raw) else { continue }
            for field in fields {
                _ = LineRecord.string(raw, field)
                _ = LineRecord.integer(raw, field)
                _ = LineRecord.date(raw, field)
            }
        }
    }
    return 0
}
