import Foundation

/// One cache entry as a directory scan sees it: names, size and last use from `stat`, and
/// the size and stored time of its metadata from its summary.
///
/// Sizes are `st_size` of the body plus the metadata's bytes (SPEC: sizes count every byte
/// of the entries' files, metadata included); Foundation's allocated size over-counts.
struct ScannedEntry: Sendable {
    /// Shard folder (`ab`) and digest hex.
    let shard: String
    let name: String
    var hasBody = false
    /// A `.meta` sidecar exists (file systems without user extended attributes).
    var hasSidecar = false
    /// The body has its metadata, in its attributes or in the sidecar.
    var hasMetadata = false
    var bodyBytes: Int64 = 0
    var metadataBytes: Int64 = 0
    /// The stored time, in nanoseconds since 1970.
    var storedAt: Int64 = 0
    /// The body's mtime: the LRU access time, in nanoseconds since 1970.
    var accessedAt: Int64 = 0
    /// The sidecar's mtime, which dates a sidecar left without its body.
    var sidecarWrittenAt: Int64 = 0
    /// Identifies the scanned body file, so removal can tell whether it was replaced.
    var inode: UInt64 = 0

    var bytes: Int64 { bodyBytes + metadataBytes }
    var isComplete: Bool { hasBody && hasMetadata }
}

/// A temporary file in a shard folder (see ``NewEntryFile``), as a scan sees it.
struct ScannedTemporary: Sendable {
    let shard: String
    let name: String
    /// Its mtime, in nanoseconds since 1970.
    let modifiedAt: Int64
}

/// What a scan of `entries/` found.
struct EntriesScan: Sendable {
    var entries: [ScannedEntry] = []
    var temporaries: [ScannedTemporary] = []
}

/// A blacklist record file as a directory scan sees it.
struct ScannedRecord: Sendable {
    let shard: String
    let name: String
    /// The file's mtime: the record time, in nanoseconds since 1970.
    let recordedAt: Int64
    let inode: UInt64
}

/// Directory walking with `readdir`, `fstatat` and `lgetxattr`: no per-file `open`, so
/// scanning 100,000 entries costs about 200,000 cheap system calls.
enum CacheScan {
    /// Calls `body` with the directory's descriptor and each name but `.` and `..`.
    /// Returns false when `path` cannot be opened.
    @discardableResult
    static func forEachName(in path: String, _ body: (Int32, String) -> Void) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        let fd = dirfd(directory)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let item = readdir(directory) {
            let name = String(
                cString: UnsafeRawPointer(item).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            body(fd, name)
        }
        return true
    }

    /// Nanoseconds since 1970 of a `timespec`.
    static func nanoseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }

    static func nanoseconds(_ date: Date) -> Int64 { nanoseconds(FileTime.timespec(date)) }

    /// Whether `name` is a shard folder name: two lower-case hex digits.
    static func isShard(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Every entry under `entriesDirectory`, complete or not (a half left by a crash
    /// included), and the temporary files; shards listed in parallel. Nil when it cannot
    /// be read.
    static func entries(in entriesDirectory: String) -> EntriesScan? {
        var shards: [String] = []
        guard forEachName(in: entriesDirectory, { _, name in if isShard(name) { shards.append(name) } }) else {
            return nil
        }
        return ShardWorkers.map(shards.sorted()) { shard in entries(in: entriesDirectory, shard: shard) }
            .reduce(into: EntriesScan()) { all, one in
                all.entries += one.entries
                all.temporaries += one.temporaries
            }
    }

    /// The entries and temporary files of one shard folder: one `fstatat` per file, and
    /// one `lgetxattr` of the summary per body (or a read of its sidecar). The summary
    /// sits inside the inode on ext4, so the scan never reads the origin's block.
    static func entries(in entriesDirectory: String, shard: String) -> EntriesScan {
        var byName: [String: ScannedEntry] = [:]
        var temporaries: [ScannedTemporary] = []
        let folder = "\(entriesDirectory)/\(shard)"
        forEachName(in: folder) { fd, name in
            let length = name.utf8.count
            let isSidecar = length == 32 + EntryFile.sidecarSuffix.utf8.count && name.hasSuffix(EntryFile.sidecarSuffix)
            let isTemporary = !isSidecar && name.hasSuffix(EntryFile.temporarySuffix)
            guard length == 32 || isSidecar || isTemporary else { return }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                return
            }
            if isTemporary {
                temporaries.append(ScannedTemporary(shard: shard, name: name, modifiedAt: nanoseconds(info.st_mtim)))
                return
            }
            let digest = isSidecar ? String(name.utf8.prefix(32))! : name
            var entry = byName[digest] ?? ScannedEntry(shard: shard, name: digest)
            if isSidecar {
                entry.hasSidecar = true
                entry.sidecarWrittenAt = nanoseconds(info.st_mtim)
            } else {
                entry.hasBody = true
                entry.bodyBytes = Int64(info.st_size)
                entry.accessedAt = nanoseconds(info.st_mtim)
                entry.inode = UInt64(info.st_ino)
            }
            byName[digest] = entry
        }
        let entries = byName.values.map { scanned in
            var entry = scanned
            guard entry.hasBody else { return entry }
            let path = "\(folder)/\(entry.name)"
            var metadata: (bytes: Int, storedAt: Date)?
            switch EntryFile.attribute(EntryFile.summaryAttribute, atPath: path, EntrySummary.init(decoding:)) {
            case .found(let summary): metadata = (EntrySummary.encodedSize + summary.originBytes, summary.storedAt)
            case .absent: metadata = EntryFile.sidecar(path).map { ($0.bytes, $0.entry.storedAt) }
            case .damaged: break
            }
            if let metadata {
                entry.hasMetadata = true
                entry.metadataBytes = Int64(metadata.bytes)
                entry.storedAt = nanoseconds(metadata.storedAt)
            }
            return entry
        }
        return EntriesScan(entries: entries, temporaries: temporaries)
    }

    /// Every blacklist record file under `failedDirectory` (none when it does not exist).
    static func records(in failedDirectory: String) -> [ScannedRecord] {
        var result: [ScannedRecord] = []
        var shards: [String] = []
        forEachName(in: failedDirectory) { _, name in if isShard(name) { shards.append(name) } }
        for shard in shards.sorted() {
            forEachName(in: "\(failedDirectory)/\(shard)") { fd, name in
                guard name.utf8.count == 32 else { return }
                var info = stat()
                guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    return
                }
                result.append(
                    ScannedRecord(
                        shard: shard, name: name, recordedAt: nanoseconds(info.st_mtim), inode: UInt64(info.st_ino)))
            }
        }
        return result
    }

    /// Whether the body at `path` is still the one scanned (same inode and access time).
    static func isUnchanged(_ path: String, as scanned: ScannedEntry) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && UInt64(info.st_ino) == scanned.inode
            && nanoseconds(info.st_mtim) == scanned.accessedAt
    }

    /// Whether nothing exists at `path`.
    static func isMissing(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) != 0 && errno == ENOENT
    }
}
