import Foundation

/// The persistent failed-URL blacklist, stored in the cache directory and keyed like it.
///
/// Unlike SDWebImage's in-memory `failedURLs`, records outlive the process, so a nightly
/// job does not pay again for a dead URL; only permanent failures are recorded, so a flaky
/// network never poisons the list. One small file per key under `failed/ab/<digest>`,
/// written by temporary file and rename under the shard lock (see ``DirectoryLock``), so
/// concurrent processes see whole records or none. Expiry (`--max-age`) is the caller's
/// decision via ``FailureRecord/isActive(now:maxAge:)``; `clean` deletes expired files.
///
/// Thread-safe: no mutable state of its own; the file system is the state. Writing is best
/// effort: a record that cannot be written only costs a request next time.
public final class FailureBlacklist: Sendable {
    let cache: DiskCache

    public init(cache: DiskCache) {
        self.cache = cache
    }

    func path(for key: URLKey) -> String {
        "\(cache.failedDirectory)/\(DiskCache.shard(of: key))/\(key.digest.hex)"
    }

    /// The record for `key`, active or expired, or nil (also for a damaged file).
    public func record(for key: URLKey) -> FailureRecord? {
        LineRecord.read(path(for: key)) { bytes, _ in
            FailureRecord(fileBytes: bytes).flatMap { $0.url == key.string ? $0 : nil }
        }
    }

    /// Records `failure` for `key` when its kind is permanent; returns whether it did.
    @discardableResult
    public func insert(_ failure: FetchFailure, for key: URLKey) -> Bool {
        guard failure.kind.isPermanent else { return false }
        let date = cache.now()
        let record = FailureRecord(url: key.string, kind: failure.kind, detail: failure.detail, recordedAt: date)
        let shard = DiskCache.shard(of: key)
        let shardDirectory = "\(cache.failedDirectory)/\(shard)"
        guard mkdir(shardDirectory, 0o755) == 0 || errno == EEXIST,
            let temporary = try? AtomicWrite.writeTemporary(
                record.fileBytes, in: cache.temporaryDirectory, modified: date)
        else { return false }
        let target = path(for: key)
        return cache.shardLock(shard).withLock { (try? AtomicWrite.commit(temporary, to: target)) != nil }
    }

    /// Every readable record, oldest first.
    public func list() -> [FailureRecord] {
        CacheScan.records(in: cache.failedDirectory).compactMap { scanned in
            LineRecord.read("\(cache.failedDirectory)/\(scanned.shard)/\(scanned.name)") { bytes, _ in
                FailureRecord(fileBytes: bytes)
            }
        }
        .sorted { $0.recordedAt < $1.recordedAt }
    }

    /// Removes every record (`sdfetch failed clear`); returns how many there were.
    @discardableResult
    public func clear() -> Int {
        CacheScan.records(in: cache.failedDirectory).filter { scanned in
            unlink("\(cache.failedDirectory)/\(scanned.shard)/\(scanned.name)") == 0
        }
        .count
    }

    /// Removes the records of `keys` (`sdfetch failed remove`); returns how many existed.
    @discardableResult
    public func remove(_ keys: [URLKey]) -> Int {
        keys.filter { unlink(path(for: $0)) == 0 }.count
    }

    /// Deletes records made at or before `limit` (ns since 1970, read from file mtimes), the
    /// same boundary as ``FailureRecord/isActive(now:maxAge:)``; with
    /// `dryRun` only counts them. A record renewed since the scan (new inode) survives.
    func removeExpired(recordedUpTo limit: Int64, dryRun: Bool) -> Int {
        let expired = CacheScan.records(in: cache.failedDirectory).filter { $0.recordedAt <= limit }
        if dryRun { return expired.count }
        var removed = 0
        for (shard, records) in Dictionary(grouping: expired, by: \.shard) {
            cache.shardLock(shard).withLock {
                for scanned in records {
                    let path = "\(cache.failedDirectory)/\(shard)/\(scanned.name)"
                    var info = stat()
                    guard lstat(path, &info) == 0, UInt64(info.st_ino) == scanned.inode else { continue }
                    if unlink(path) == 0 { removed += 1 }
                }
            }
        }
        return removed
    }
}

extension DiskCache {
    /// `clean`'s part for the blacklist: expired records go with expired entries.
    func removeExpiredRecords(recordedUpTo limit: Int64, dryRun: Bool) -> Int {
        FailureBlacklist(cache: self).removeExpired(recordedUpTo: limit, dryRun: dryRun)
    }
}
