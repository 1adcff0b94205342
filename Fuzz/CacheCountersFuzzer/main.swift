import Glibc

@testable import SDFetchCore

/// libFuzzer entry point over `usage/` counter files (<doc:OnDiskFormat#Counters-and-trimming>)
/// and the trim's arithmetic over them: the input is up to 256 counter files separated by NUL
/// bytes, each parsed as ``BucketUsage`` and, when it parses, given to one bucket (bit 0 of
/// the first byte: the last one to every bucket left, as a forger of every file would). The
/// trim then runs as a dry run over an empty cache, with a cap from the first byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func cacheCountersFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    var usages = [BucketUsage](repeating: BucketUsage(), count: Buckets.count)
    var bucket = 0
    for file in input.rest.split(separator: 0, omittingEmptySubsequences: false).prefix(Buckets.count) {
        guard let usage = Array(file).withUnsafeBytes({ BucketUsage(fileBytes: $0) }) else { continue }
        precondition(usage.bytes >= 0 && usage.bytes <= BucketUsage.maxBytes && usage.entries >= 0)
        precondition(usage.entries > 0 || usage.bytes == 0, "no entries, no bytes")
        // What is written reads back the same.
        precondition(usage.fileBytes.withUnsafeBytes { BucketUsage(fileBytes: $0) } == usage)
        _ = usage.isCurrent(for: nil)
        _ = usage.isCurrent(for: BucketFileState(inode: usage.inode, size: usage.length))
        usages[bucket] = usage
        bucket += 1
    }
    if input.mode & 1 != 0, bucket > 0 {
        for index in bucket..<Buckets.count { usages[index] = usages[bucket - 1] }
    }
    var report = CleanReport()
    var removed = Set<UInt64>()
    let maxBytes = Int64(input.mode >> 1) << 20
    cache.trim(
        &usages, to: maxBytes, protecting: [], dryRun: true, listing: false, wait: .always, removedInodes: &removed,
        into: &report)
    // The cache is empty: whatever the counters claimed, the trim counts nothing in the end.
    precondition(report.removedEntries == 0 && usages.allSatisfy { $0.bytes == 0 || $0.entries > 0 })
    return 0
}

/// An empty cache of the process's own, opened once.
private let cache: DiskCache = {
    do { return try DiskCache(directory: FuzzInput.folder + "/counters-cache") } catch {
        fatalError("cannot open a cache in \(FuzzInput.folder): \(error)")
    }
}()
