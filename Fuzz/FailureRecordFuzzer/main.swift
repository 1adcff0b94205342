import FoundationEssentials

@testable import SDFetchCore

/// libFuzzer entry point over the record files of a cache directory (<doc:OnDiskFormat>): the
/// line-record layout they share, a failed-URL record (`failed/ab/DIGEST`), whose times and
/// kinds come back into a run and into `merge`, and a host-down record (`hosts/DIGEST`),
/// whose origin, kind and cause start a run with a host down.
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
        if let record = HostDownRecord(fileBytes: raw) {
            precondition(record.host.utf8.count <= HostDownRecord.maxHostLength)
            precondition(record.cause.utf8.count <= HostDownRecord.maxCauseLength)
            // Written back as read; a run starts with it down and tells its cause.
            _ = record.fileBytes.withUnsafeBytes { HostDownRecord(fileBytes: $0) }
            let health = HostHealth()
            health.rememberDown([record], now: Date(), limit: 5)
            _ = health.failure(for: record.host).detail
            _ = Origin(record.host)?.authority
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
