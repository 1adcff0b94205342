import Foundation

/// One cache entry as a directory scan sees it: names, sizes and times from `stat` alone.
///
/// Sizes are `st_size` of the body plus the `.meta` file (SPEC: sizes count every byte of
/// the entries' files, metadata included); Foundation's allocated size over-counts.
struct ScannedEntry: Sendable {
    /// Shard folder (`ab`) and digest hex.
    let shard: String
    let name: String
    var hasBody = false
    var hasMeta = false
    var bodyBytes: Int64 = 0
    var metaBytes: Int64 = 0
    /// The body's mtime: the stored time, in nanoseconds since 1970.
    var storedAt: Int64 = 0
    /// The `.meta` file's mtime: the LRU access time, in nanoseconds since 1970.
    var accessedAt: Int64 = 0
    /// Identifies the scanned `.meta` file, so removal can tell whether it was replaced.
    var metaInode: UInt64 = 0

    var bytes: Int64 { bodyBytes + metaBytes }
    var isComplete: Bool { hasBody && hasMeta }
}

/// A blacklist record file as a directory scan sees it.
struct ScannedRecord: Sendable {
    let shard: String
    let name: String
    /// The file's mtime: the record time, in nanoseconds since 1970.
    let recordedAt: Int64
    let inode: UInt64
}

/// Directory walking with `readdir` and `fstatat`: no per-file `open`, so scanning 100,000
/// entries costs about 200,000 cheap system calls.
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

    /// Every entry under `entriesDirectory`, complete or not (a body without `.meta` is
    /// left over from a crash), shards listed in parallel. Nil when it cannot be read.
    static func entries(in entriesDirectory: String) -> [ScannedEntry]? {
        var shards: [String] = []
        guard forEachName(in: entriesDirectory, { _, name in if isShard(name) { shards.append(name) } }) else {
            return nil
        }
        return ShardWorkers.map(shards.sorted()) { shard in entries(in: entriesDirectory, shard: shard) }.flatMap { $0 }
    }

    /// The entries of one shard folder.
    static func entries(in entriesDirectory: String, shard: String) -> [ScannedEntry] {
        var byName: [String: ScannedEntry] = [:]
        forEachName(in: "\(entriesDirectory)/\(shard)") { fd, name in
            let length = name.utf8.count
            let isMeta = length == 37 && name.hasSuffix(".meta")
            guard length == 32 || isMeta else { return }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                return
            }
            let digest = isMeta ? String(name.utf8.prefix(32))! : name
            var entry = byName[digest] ?? ScannedEntry(shard: shard, name: digest)
            if isMeta {
                entry.hasMeta = true
                entry.metaBytes = Int64(info.st_size)
                entry.accessedAt = nanoseconds(info.st_mtim)
                entry.metaInode = UInt64(info.st_ino)
            } else {
                entry.hasBody = true
                entry.bodyBytes = Int64(info.st_size)
                entry.storedAt = nanoseconds(info.st_mtim)
            }
            byName[digest] = entry
        }
        return Array(byName.values)
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

    /// Whether the `.meta` file at `path` is still the one scanned (same inode and access time).
    static func isUnchanged(_ path: String, as scanned: ScannedEntry) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && UInt64(info.st_ino) == scanned.metaInode
            && nanoseconds(info.st_mtim) == scanned.accessedAt
    }

    /// Whether nothing exists at `path`.
    static func isMissing(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) != 0 && errno == ENOENT
    }
}
