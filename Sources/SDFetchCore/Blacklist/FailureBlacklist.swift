import FoundationEssentials
import Glibc

/// The persistent failed-URL blacklist, stored in the cache directory and keyed like it.
///
/// Unlike SDWebImage's in-memory `failedURLs`, records outlive the process, so a nightly
/// job does not pay again for a dead URL; only permanent failures are recorded, so a flaky
/// network never poisons the list. One small file per key under `failed/ab/<digest>`,
/// written by temporary file and rename under the bucket lock (see ``DirectoryLock``), so
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

    /// The record for `key`, active or expired, or nil (also for a damaged file).
    public func record(for key: URLKey) -> FailureRecord? {
        cache.failed.with(Buckets.index(of: key.digest), create: false) { folder in
            guard folder >= 0 else { return nil }
            return LineRecord.read(key.digest.hex, relativeTo: folder) { bytes, _ in
                FailureRecord(fileBytes: bytes).flatMap { $0.url == key.redacted ? $0 : nil }
            }
        }
    }

    /// Records `failure` for `key` when its kind is permanent; returns whether it did.
    @discardableResult
    public func insert(_ failure: FetchFailure, for key: URLKey) -> Bool {
        guard failure.kind.isPermanent else { return false }
        // A stale signature answers 400, 401 or 403 alike; the key leaves the signature out,
        // so a record would skip every fresh signature of the object.
        if key.carriesIgnoredParameters { return false }
        // The key leaves the password out too: a wrong one's 401 or 403 must not skip the right one.
        if failure.kind == .http(401) || failure.kind == .http(403), key.redacted != key.string { return false }
        let record = FailureRecord(
            url: key.redacted, kind: failure.kind, detail: failure.detail, recordedAt: cache.now())
        return write(record, for: key.digest)
    }

    /// Writes `record` as `digest`'s record file, replacing any (and its time as the file's mtime).
    func write(_ record: FailureRecord, for digest: KeyDigest) -> Bool {
        let bucket = Buckets.index(of: digest)
        return cache.failed.with(bucket, create: true) { folder in
            guard folder >= 0,
                let temporary = try? AtomicWrite.writeTemporary(
                    record.fileBytes, in: cache.temporaryDirectory, modified: record.recordedAt)
            else { return false }
            // A fetch writes records: a holder stuck past the wait is not waited for.
            return cache.bucketLock(bucket).withLock(waitingAtMost: cache.waits.bucketLock) {
                guard renameat(AT_FDCWD, temporary, folder, digest.hex) == 0 else {
                    unlink(temporary)
                    return false
                }
                return true
            }
        }
    }

    /// Every readable record with its digest, in bucket order.
    func all() -> [(digest: KeyDigest, record: FailureRecord)] {
        (0..<Buckets.count).flatMap { bucket -> [(digest: KeyDigest, record: FailureRecord)] in
            cache.failed.with(bucket, create: false) { folder in
                CacheScan.bucket(folder).files.compactMap { file in
                    guard let digest = KeyDigest(hex: file.name),
                        let record = LineRecord.read(
                            file.name, relativeTo: folder, { bytes, _ in FailureRecord(fileBytes: bytes) })
                    else { return nil }
                    return (digest, record)
                }
            }
        }
    }

    /// Every readable record, oldest first.
    public func list() -> [FailureRecord] {
        all().map(\.record).sorted { $0.recordedAt < $1.recordedAt }
    }

    /// The number of record files, read or not.
    public func count() -> Int {
        (0..<Buckets.count).reduce(0) { count, bucket in
            count + cache.failed.with(bucket, create: false) { CacheScan.bucket($0).files.count }
        }
    }

    /// Removes every record (`sdfetch failed clear`); returns how many there were.
    @discardableResult
    public func clear() -> Int {
        (0..<Buckets.count).reduce(0) { count, bucket in
            count
                + cache.failed.with(bucket, create: false) { folder in
                    CacheScan.bucket(folder).files.filter { unlinkat(folder, $0.name, 0) == 0 }.count
                }
        }
    }

    /// Removes the records of `keys` (`sdfetch failed remove`); returns how many existed.
    @discardableResult
    public func remove(_ keys: [URLKey]) -> Int {
        keys.filter { key in
            cache.failed.with(Buckets.index(of: key.digest), create: false) { folder in
                folder >= 0 && unlinkat(folder, key.digest.hex, 0) == 0
            }
        }
        .count
    }

    /// Deletes records made at or before `limit` (ns since 1970, read from file mtimes), the
    /// same boundary as ``FailureRecord/isActive(now:maxAge:)``, and anything in `failed/`
    /// that is not a regular file; with `dryRun` only counts them. A record renewed since the
    /// scan (new inode) survives.
    /// Removes records made at or before `limit`, or after `latest` (dated in the future).
    func removeExpired(recordedUpTo limit: Int64, after latest: Int64, dryRun: Bool) -> Int {
        var removed = 0
        for fake in CacheScan.fakeBuckets(in: cache.failed.parent.value) {
            if dryRun || CacheScan.removeStray(fake, in: cache.failed.parent.value) { removed += 1 }
        }
        for bucket in 0..<Buckets.count {
            cache.failed.with(bucket, create: false) { folder in
                let scan = CacheScan.bucket(folder)
                let expired = scan.files.filter { $0.modifiedAt <= limit || $0.modifiedAt > latest }
                if dryRun {
                    removed += expired.count + scan.strays.count
                    return
                }
                cache.bucketLock(bucket).withLock {
                    for file in expired where CacheScan.isUnchanged(file.name, in: folder, as: file) {
                        if unlinkat(folder, file.name, 0) == 0 { removed += 1 }
                    }
                    for stray in scan.strays where CacheScan.removeStray(stray, in: folder) { removed += 1 }
                }
            }
        }
        return removed
    }
}

extension DiskCache {
    /// `clean`'s part for the blacklist: expired records go with expired entries.
    func removeExpiredRecords(recordedUpTo limit: Int64, after latest: Int64, dryRun: Bool) -> Int {
        FailureBlacklist(cache: self).removeExpired(recordedUpTo: limit, after: latest, dryRun: dryRun)
    }
}
