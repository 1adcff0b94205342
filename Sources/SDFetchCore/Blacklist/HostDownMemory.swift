import FoundationEssentials
import Glibc

/// Hosts found down, remembered in the cache directory for a short while (`--host-down-for`,
/// an hour by default), so a re-run minutes later neither dials them nor waits for their
/// timeouts again (<doc:Fetching#Retries-and-timeouts>). Hosts come back, so this is not
/// the week-long record a `404` gets: a record counts only while younger than the run's
/// `--host-down-for` (a day at most), and `clean` removes it after a day.
///
/// One small file per host under `hosts/<digest>` (``HostDownRecord``), written under a
/// temporary name and renamed into place, so readers see whole records or none; a damaged,
/// foreign or misplaced file is no record. A run reads the folder once at its start, at most
/// ``maxRecords`` files of at most ``LineRecord/limit`` bytes each, and writes the hosts it
/// found down at its end. Thread-safe: no mutable state; the file system is the state.
/// Writing is best effort: a record that cannot be written costs a timeout next time.
public struct HostDownMemory: Sendable {
    let cache: DiskCache

    /// The most record files a run reads: a list of 10,000 URLs meets some hundreds of dead
    /// hosts; 10,000 forged records cost a run a few megabytes and milliseconds.
    static let maxRecords = 10_000
    /// The longest `--host-down-for`, and the age at which `clean` removes a record.
    public static let longest: Duration = .seconds(86_400)
    static let folderName = "hosts"

    public init(cache: DiskCache) {
        self.cache = cache
    }

    /// The records younger than `duration` at `now` (none dated in the future).
    public func active(now: Date, within duration: Duration) -> [HostDownRecord] {
        let nowNanoseconds = FileTime.nanoseconds(now)
        let oldest = nowNanoseconds - Freshness.nanoseconds(min(duration, Self.longest))
        let latest = Freshness.latestBelievable(now: nowNanoseconds)
        return withFolder(create: false) { folder in
            CacheScan.bucket(folder).files.lazy.filter { $0.modifiedAt > oldest && $0.modifiedAt <= latest }
                .prefix(Self.maxRecords)
                .compactMap { file in
                    LineRecord.read(file.name, relativeTo: folder) { bytes, _ in HostDownRecord(fileBytes: bytes) }
                        .flatMap { record in
                            let recorded = FileTime.nanoseconds(record.recordedAt)
                            let isOwnName = HostDownRecord.fileName(of: record.host) == file.name
                            return isOwnName && recorded > oldest && recorded <= latest ? record : nil
                        }
                }
        } ?? []
    }

    /// Remembers `hosts` as found down at `now`, replacing their earlier records.
    public func remember(_ hosts: [DownHost], at now: Date) {
        let records = hosts.filter {
            HostDownRecord.isRemembered($0.kind) && $0.host.utf8.count <= HostDownRecord.maxHostLength
        }
        guard !records.isEmpty else { return }
        _ = withFolder(create: true) { folder in
            for host in records {
                let record = HostDownRecord(host: host.host, kind: host.kind, cause: host.cause, recordedAt: now)
                guard
                    let temporary = try? AtomicWrite.writeTemporary(
                        record.fileBytes, in: cache.temporaryDirectory, modified: now)
                else { continue }
                if renameat(AT_FDCWD, temporary, folder, HostDownRecord.fileName(of: host.host)) != 0 {
                    unlink(temporary)
                }
            }
        }
    }

    /// Removes the records of `origins`, which answered in a run (`--retry-failed` dialled
    /// them again): a host seen answering is not down for the rest of the hour.
    public func forget(_ origins: [String]) {
        guard !origins.isEmpty else { return }
        _ = withFolder(create: false) { folder in
            for origin in origins { unlinkat(folder, HostDownRecord.fileName(of: origin), 0) }
        }
    }

    /// Removes every record (`sdfetch failed clear` clears the hosts too); returns how many.
    @discardableResult
    public func clear() -> Int {
        withFolder(create: false) { folder in
            CacheScan.bucket(folder).files.filter { unlinkat(folder, $0.name, 0) == 0 }.count
        } ?? 0
    }

    /// `clean`'s part: removes records made at or before `limit` or after `latest` (ns since
    /// 1970, from file mtimes), temporary files older than `limit`, and anything that is not
    /// a regular file; with `dryRun` only counts them.
    func removeExpired(upTo limit: Int64, after latest: Int64, dryRun: Bool) -> Int {
        withFolder(create: false) { folder in
            let scan = CacheScan.bucket(folder)
            let expired = (scan.files + scan.temporaries).filter { $0.modifiedAt <= limit || $0.modifiedAt > latest }
            if dryRun { return expired.count + scan.strays.count }
            var removed = 0
            for file in expired where CacheScan.isUnchanged(file.name, in: folder, as: file) {
                if unlinkat(folder, file.name, 0) == 0 { removed += 1 }
            }
            for stray in scan.strays where CacheScan.removeStray(stray, in: folder) { removed += 1 }
            return removed
        } ?? 0
    }

    /// Runs `body` with the `hosts/` folder open (never through a link); nil when it is
    /// missing (and not to be created) or cannot be opened.
    private func withFolder<T>(create: Bool, _ body: (Int32) -> T) -> T? {
        guard cache.root.value >= 0 else { return nil }
        let folder = SafeOpen.directory(Self.folderName, in: cache.root.value, create: create)
        guard folder >= 0 else { return nil }
        defer { close(folder) }
        return body(folder)
    }
}

extension DiskCache {
    /// `clean`'s part for remembered hosts: records older than ``HostDownMemory/longest``.
    func removeExpiredHostRecords(now nanoseconds: Int64, after latest: Int64, dryRun: Bool) -> Int {
        let limit = nanoseconds - Freshness.nanoseconds(HostDownMemory.longest)
        return HostDownMemory(cache: self).removeExpired(upTo: limit, after: latest, dryRun: dryRun)
    }
}
