import FoundationEssentials
import Glibc

extension DiskCache {
    /// `sdfetch verify` (<doc:OnDiskFormat#How-it-stays-right>): hashes every entry file
    /// against its record's SHA-256 and removes those that differ, and entry files without a
    /// record; then compacts the index. A file that entries share (``ContentFile``) is hashed
    /// and counted once, and goes with every entry whose record it does not match.
    ///
    /// Safe while fetches run: a file is removed under its bucket lock only if it is still
    /// the one hashed (same inode and size), so a replacement stored meanwhile survives.
    public func verify() -> VerifyReport {
        maintenanceLock.withLock {
            flushUses()
            let hashed = HashedFiles()
            let partials = BucketWorkers.map(Array(0..<Buckets.count)) { self.verify(bucket: $0, hashed: hashed) }
            compactAll(present: partials.map(\.present), removed: [])
            _ = removeUnusedContent()
            return partials.reduce(into: VerifyReport()) { all, one in
                all.checked += one.checked
                all.checkedBytes += one.checkedBytes
                all.removed += one.removed
                all.restamped += one.restamped
                all.present.formUnion(one.present)
            }
        }
    }

    private func verify(bucket: Int, hashed: HashedFiles) -> VerifyReport {
        entries.with(bucket, create: false) { verify(bucket: bucket, folder: $0, hashed: hashed) }
    }

    private func verify(bucket: Int, folder: Int32, hashed: HashedFiles) -> VerifyReport {
        var report = VerifyReport()
        var bad: [(ScannedFile, String?, String)] = []
        let sweep = sweep(bucket) { item, entry in
            report.checked += 1
            let fd = SafeOpen.file(item.digest.hex, in: folder, flags: O_RDONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return }
            let hashing = hashed.digest(of: UInt64(info.st_ino)) { EntryFile.sha256(of: fd, expecting: entry.bytes) ?? "" }
            if hashing.isNew { report.checkedBytes += item.fileBytes }
            guard hashing.digest == entry.sha256 else {
                bad.append((item.file, entry.url, "bytes differ from the recorded SHA-256"))
                return
            }
            report.present.insert(item.digest)
            if item.modifiedAt != FileTime.nanoseconds(seconds: entry.stamp) {
                EntryFile.setStamp(fd, entry.stamp)
                report.restamped += 1
            }
        }
        let strayLimit = FileTime.nanoseconds(now()) - Freshness.nanoseconds(Self.strayTemporaryAge)
        bad += sweep.broken.filter { $0.modifiedAt < strayLimit }.map { ($0, nil, "no index record, or not the recorded size") }
        guard !bad.isEmpty else { return report }
        bucketLock(bucket).withLock {
            for (file, url, reason) in bad
            where CacheScan.isUnchanged(file.name, in: folder, as: file) && unlinkat(folder, file.name, 0) == 0 {
                let path = "\(entriesDirectory)/\(Buckets.name(bucket))/\(file.name)"
                report.removed.append(VerifyReport.Removed(url: url, path: path, reason: reason))
            }
        }
        return report
    }
}
