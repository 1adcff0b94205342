import FoundationEssentials
import Glibc

/// Directory walking with `readdir` and `fstatat` relative to held descriptors: no per-file
/// `open`, no link followed.
enum CacheScan {
    /// Calls `body` with each name in the folder open as `folder` but `.` and `..`, with
    /// the type and inode number `readdir` reports. Returns false when it cannot be read.
    @discardableResult
    static func forEachEntry(in folder: Int32, _ body: (_ name: String, _ type: UInt8, _ inode: UInt64) -> Void) -> Bool
    {
        forEachRawEntry(in: folder) { name, _, type, inode in
            body(String(cString: name), type, inode)
            return true
        }
    }

    /// ``forEachEntry(in:_:)`` with each name as `readdir` holds it (NUL-terminated, its
    /// length beside it), no string made; `body` returns false to stop early.
    @discardableResult
    private static func forEachRawEntry(
        in folder: Int32, _ body: (_ name: UnsafePointer<UInt8>, _ length: Int, _ type: UInt8, _ inode: UInt64) -> Bool
    ) -> Bool {
        let copy = dup(folder)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return false
        }
        defer { closedir(directory) }
        rewinddir(directory)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let item = readdir(directory) {
            let name = UnsafeRawPointer(item).advanced(by: nameOffset).assumingMemoryBound(to: UInt8.self)
            let length = strlen(name)
            if (length == 1 && name[0] == 0x2E) || (length == 2 && name[0] == 0x2E && name[1] == 0x2E) { continue }
            guard body(name, length, item.pointee.d_type, UInt64(item.pointee.d_ino)) else { break }
        }
        return true
    }

    /// The names in the folder open as `folder`, at most `limit`; nil when it cannot be read
    /// or holds more.
    static func names(in folder: Int32, limit: Int) -> [String]? {
        var names: [String] = []
        var isOver = false
        let isRead = forEachName(in: folder) { name in
            if names.count == limit { isOver = true } else { names.append(name) }
        }
        return isRead && !isOver ? names : nil
    }

    /// ``forEachEntry(in:_:)`` for names only.
    @discardableResult
    static func forEachName(in folder: Int32, _ body: (String) -> Void) -> Bool {
        forEachEntry(in: folder) { name, _, _ in body(name) }
    }

    /// The files of the bucket folder open as `folder` (nothing when it is -1), each `stat`ed;
    /// what is not a regular file, or is dated out of range (``FileTime/isInRange(_:)``), is
    /// a stray.
    ///
    /// With `statEntries` false, entry files are taken from `readdir` alone: name, type and
    /// inode number, sizes and times unknown (-1). What `clean` and the trim walk, where the
    /// index knows every entry's size. Names whose type the file system does not report,
    /// temporaries and other names are still `stat`ed.
    static func bucket(_ folder: Int32, statEntries: Bool = true) -> BucketScan {
        var scan = BucketScan()
        guard folder >= 0 else { return scan }
        forEachEntry(in: folder) { name, type, inode in
            let isEntryName = name.utf8.count == 32 && name.utf8.allSatisfy(isHexDigit)
            if !statEntries, isEntryName, type == UInt8(DT_REG) {
                scan.files.append(ScannedFile(name: name, bytes: -1, modifiedAt: -1, inode: inode))
                return
            }
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
            // A time the cache never writes (after 2100, before 1970): a stray, whatever its name.
            guard (info.st_mode & S_IFMT) == S_IFREG, FileTime.isInRange(FileTime.nanoseconds(info.st_mtim)) else {
                return scan.strays.append(name)
            }
            let file = ScannedFile(
                name: name, bytes: Int64(info.st_size), modifiedAt: FileTime.nanoseconds(info.st_mtim),
                inode: UInt64(info.st_ino), links: Int(info.st_nlink))
            if isEntryName {
                scan.files.append(file)
            } else if name.hasSuffix(FileIO.temporarySuffix) {
                scan.temporaries.append(file)
            }
        }
        return scan
    }

    /// The inode numbers of the names in the bucket folder open as `folder` (none when it is
    /// -1), from `readdir` alone; nil when it cannot be read or holds any name other than
    /// an entry file's (32 hex digits, a regular file): a temporary, a stray, a link.
    static func entryInodes(in folder: Int32) -> [UInt64]? {
        guard folder >= 0 else { return [] }
        var inodes: [UInt64] = []
        var isTidy = true
        let isRead = forEachRawEntry(in: folder) { name, length, type, inode in
            isTidy = length == 32 && type == UInt8(DT_REG) && (0..<32).allSatisfy { isHexDigit(name[$0]) }
            if isTidy { inodes.append(inode) }
            return isTidy
        }
        return isRead && isTidy ? inodes : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
    }

    /// Names at the top of a cache folder (`entries/`, `failed/`) that are bucket names but
    /// not real directories (a planted link): `clean` removes them, nothing enters them.
    static func fakeBuckets(in parent: Int32) -> [String] {
        var names: [String] = []
        forEachName(in: parent) { name in
            var info = stat()
            guard Buckets.index(named: name) != nil, fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                (info.st_mode & S_IFMT) != S_IFDIR
            else { return }
            names.append(name)
        }
        return names
    }

    /// Whether `name` in `folder` is still the file scanned (same inode, and same size when
    /// the scan knew it).
    static func isUnchanged(_ name: String, in folder: Int32, as scanned: ScannedFile) -> Bool {
        var info = stat()
        return fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && UInt64(info.st_ino) == scanned.inode
            && (scanned.bytes < 0 || Int64(info.st_size) == scanned.bytes)
    }

    /// Removes the non-file `name` from `folder`: the link or node itself, never its target;
    /// an empty folder too. Returns whether it is gone.
    static func removeStray(_ name: String, in folder: Int32) -> Bool {
        unlinkat(folder, name, 0) == 0 || unlinkat(folder, name, AT_REMOVEDIR) == 0
    }
}
