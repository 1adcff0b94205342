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
    /// Works one bucket at a time, each under its lock only while removing or compacting.
    public func verify() -> VerifyReport {
        maintenanceLock.withLock {
            flushUses()
            let hashed = HashedFiles()
            let partials = BucketWorkers.map(Array(0..<Buckets.count)) { self.verify(bucket: $0, hashed: hashed) }
            _ = removeUnusedContent()
            return partials.reduce(into: VerifyReport()) { all, one in
                all.checked += one.checked
                all.checkedBytes += one.checkedBytes
                all.removed += one.removed
                all.restamped += one.restamped
            }
        }
    }

    private func verify(bucket: Int, hashed: HashedFiles) -> VerifyReport {
        entries.with(bucket, create: false) { verify(bucket: bucket, folder: $0, hashed: hashed) }
    }

    private func verify(bucket: Int, folder: Int32, hashed: HashedFiles) -> VerifyReport {
        var report = VerifyReport()
        var bad: [(ScannedFile, String?, String)] = []
        // Entries left in place, for the bucket's compaction: one bucket's, never the cache's.
        var present = Set<KeyDigest>()
        let sweep = sweep(bucket) { item, entry in
            report.checked += 1
            let fd = SafeOpen.file(item.digest.hex, in: folder, flags: O_RDONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return }
            // Only a file other entries name too is remembered (a few per shared file, not a
            // million strings): an entry's name and its content name make two links.
            let hashing = hashed.digest(of: UInt64(info.st_ino), remember: info.st_nlink > 2) {
                EntryFile.sha256(of: fd, expecting: entry.bytes) ?? ""
            }
            if hashing.isNew { report.checkedBytes += item.fileBytes }
            guard hashing.digest == entry.sha256 else {
                bad.append((item.file, entry.url, "bytes differ from the recorded SHA-256"))
                return
            }
            present.insert(item.digest)
            if item.modifiedAt != FileTime.nanoseconds(seconds: entry.stamp) {
                EntryFile.setStamp(fd, entry.stamp)
                report.restamped += 1
            }
        }
        let strayLimit = FileTime.nanoseconds(now()) - Freshness.nanoseconds(Self.strayTemporaryAge)
        bad += sweep.broken.filter { $0.modifiedAt < strayLimit }.map {
            ($0, nil, "no index record, or not the recorded size")
        }
        // Then the bucket's index is compacted and counted, before the next bucket's work.
        defer {
            _ = compact(
                bucket, keeping: sweep.live.filter { present.contains($0.digest) },
                removed: sweep.live.filter { !present.contains($0.digest) }, swept: sweep.countedState)
        }
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
