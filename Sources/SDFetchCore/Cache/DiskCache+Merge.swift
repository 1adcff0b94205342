import FoundationEssentials
import Glibc

extension DiskCache {
    /// `sdfetch merge SRC` (README, "Running past one machine"): copies the entries and
    /// failure records of the cache at `source` in, where this cache has none for the key or
    /// an older one (the newer stored time wins), so N sharded jobs' caches become one.
    /// Stored times, validators and LRU times travel with the entries; every copied file is
    /// checked against its SHA-256.
    ///
    /// The source is untrusted (<doc:Security>): each body is sniffed and verified by
    /// `verifier` as a download would be, within `maxBytes` (a larger record is not read),
    /// and must be the format its record names; times
    /// in the future (entries' and failure records') are taken as now.
    ///
    /// Holds the maintenance lock (no `clean` meanwhile); fetches may run. Stops at the first
    /// write this cache refuses (a full disk): ``MergeReport/writeFailure``.
    ///
    /// - Throws: ``CacheError`` when `source` is not a readable cache of this format, or is
    ///   this very directory.
    public func merge(
        from source: String, verifier: ImageVerifier = ImageVerifier(), maxBytes: Int64 = FetchOptions().maxBytes
    ) throws(CacheError) -> MergeReport {
        let other = try DiskCache(directory: source, now: now, readOnly: true)
        var mine = stat()
        var theirs = stat()
        if fstat(root.value, &mine) == 0, fstat(other.root.value, &theirs) == 0, mine.st_dev == theirs.st_dev,
            mine.st_ino == theirs.st_ino
        {
            throw CacheError(path: source, detail: "is the cache being merged into")
        }
        return maintenanceLock.withLock {
            var report = MergeReport()
            for bucket in 0..<Buckets.count {
                other.entries.with(bucket, create: false) { folder in
                    guard folder >= 0 else { return }
                    for (digest, entry) in other.index.entries(bucket) where report.writeFailure == nil {
                        merge(entry, digest, from: folder, verifier: verifier, maxBytes: maxBytes, into: &report)
                    }
                }
            }
            guard report.writeFailure == nil else { return report }
            let blacklist = FailureBlacklist(cache: self)
            for (digest, var record) in FailureBlacklist(cache: other).all() where Self.names(digest, record.url) {
                record.recordedAt = min(record.recordedAt, now())
                if let current = blacklist.record(digest), current.recordedAt >= record.recordedAt { continue }
                if blacklist.write(record, for: digest) { report.mergedFailed += 1 }
            }
            return report
        }
    }

    /// Copies one entry of another cache (its file open in `folder`) in, unless this cache's
    /// entry is as new or newer.
    private func merge(
        _ entry: CacheEntry, _ digest: KeyDigest, from folder: Int32, verifier: ImageVerifier, maxBytes: Int64,
        into report: inout MergeReport
    ) {
        var entry = entry
        let date = now()
        entry.storedAt = min(entry.storedAt, date)
        entry.accessedAt = min(entry.accessedAt, date)
        entry.stamp = min(entry.stamp, EntryFile.stamp(for: date))
        if let current = index.entry(for: digest), current.storedAt >= entry.storedAt, isIntact(current, digest) {
            report.kept += 1
            return
        }
        // The source pairs each URL with a digest: a forged pairing would file one URL's
        // image under another's name.
        guard entry.bytes <= maxBytes, Self.names(digest, entry.url) else {
            report.bad += 1
            return
        }
        let fd = SafeOpen.file(digest.hex, in: folder, flags: O_RDONLY)
        guard fd >= 0 else { return }  // a line whose file is gone: nothing to merge
        defer { close(fd) }
        guard let bytes = SafeOpen.readAll(fd, limit: Int(entry.bytes) + 1), bytes.count == entry.bytes,
            bytes.withUnsafeBytes(EntryFile.sha256(of:)) == entry.sha256,
            case .success(let image) = verifier.verify(bytes), image.format == entry.format
        else {
            report.bad += 1
            return
        }
        entry.width = image.width
        entry.height = image.height
        do throws(FetchFailure) {
            try write(entry, digest, bytes: bytes)
            report.merged += 1
            report.mergedBytes += entry.bytes
        } catch {
            // Only this cache's writes can fail here: the source's entry was read and judged good.
            report.writeFailure = error.detail
        }
    }

    /// Whether `url` (a record's, password masked) is the URL whose digest is `digest`.
    static func names(_ digest: KeyDigest, _ url: String) -> Bool {
        (try? URLKey(parsing: url))?.digest == digest
    }

    /// Removes a format-1 cache's files from `directory` (``FormatOneCache``: recognised on
    /// evidence everywhere, walked with held descriptors, links removed as links), so a cache
    /// of the current format can start there; `clean` calls it. Returns how many top-level
    /// items went (with `dryRun`, would go). Other versions, and folders that only look a
    /// little like format 1, are never touched.
    ///
    /// - Throws: ``CacheError`` when the directory cannot be opened, or holds a format-1
    ///   cache that other users can write (its names could be swapped under the walk): it is
    ///   then left whole, for its owner to remove by hand.
    public static func removeFormatOne(directory: String, dryRun: Bool = false) throws(CacheError) -> Int {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return 0 }  // nothing there yet: nothing to remove
            throw CacheError(path: directory, detail: errnoText())
        }
        defer { close(fd) }
        guard CacheFormat.read(in: fd) == .other("1") else { return 0 }
        if let open = FormatOneCache.writableByOthers(in: fd) {
            throw CacheError(
                path: directory,
                detail: "holds a cache of the previous on-disk format (1) that other users can write (\(open)): "
                    + "not removed; remove it by hand, or choose another --cache-dir")
        }
        if dryRun {
            return FormatOneCache.names.count(where: { name in
                var info = stat()
                return fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
            })
        }
        return FormatOneCache.remove(in: fd)
    }
}

extension FailureBlacklist {
    /// The record file of `digest`, whatever its URL.
    func record(_ digest: KeyDigest) -> FailureRecord? {
        cache.failed.with(Buckets.index(of: digest), create: false) { folder in
            guard folder >= 0 else { return nil }
            return LineRecord.read(digest.hex, relativeTo: folder) { bytes, _ in FailureRecord(fileBytes: bytes) }
        }
    }
}
