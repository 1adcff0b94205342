import FoundationEssentials
import Glibc

/// A content file (`content/ab/<sha256>`): one more hard link to an entry file, named by
/// its bytes' SHA-256, so that a later entry with the same bytes (a CDN alias, a mirror)
/// links that inode as its own entry file instead of writing the bytes again.
///
/// The entry files stay the truth: a content name only finds an inode, and the kernel's
/// link count keeps the bytes while any entry names them. A copy that turns the links into
/// separate files (`cp -r`, `zip`, `rsync -a` without `-H`) is still a whole cache whose
/// entries share nothing; `clean` then drops the content names left alone. Nothing found
/// under a content name is believed: it is shared only when it is a regular file of the
/// size and hash its name and the new entry call for (<doc:OnDiskFormat#Identical-bytes>).
enum ContentFile {
    /// The bucket of `sha256` (its first byte), under `content/`.
    static func bucket(of sha256: String) -> Int {
        var value = 0
        for byte in sha256.utf8.prefix(2) {
            value = value * 16 + Int(hexValue(byte))
        }
        return value
    }

    /// Whether `name` is a content file's name: 64 lower-case hex digits.
    static func isName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { hexValue($0) < 16 }
    }

    /// The content file for `sha256`, open, when it is this user's, holds exactly `bytes`
    /// (compared byte for byte: the caller hashed them to `sha256`, and a comparison costs
    /// a fraction of a hash) and carries a stamp (whole seconds, not in the future): the
    /// descriptor and that stamp, which the sharing entry records as its own. Nil otherwise.
    /// (Another user's file could be rewritten and stamped again by its owner after it
    /// became an entry.)
    static func open(
        _ sha256: String, holding bytes: [UInt8], in folder: Int32, now: Int64
    ) -> (fd: Int32, stamp: Int64)? {
        guard folder >= 0 else { return nil }
        let fd = SafeOpen.file(sha256, in: folder, flags: O_RDONLY)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), Int64(info.st_size) == Int64(bytes.count),
            info.st_mtim.tv_nsec == 0, Int64(info.st_mtim.tv_sec) > 0, Int64(info.st_mtim.tv_sec) <= now,
            holds(fd, bytes)
        else {
            close(fd)
            return nil
        }
        return (fd, Int64(info.st_mtim.tv_sec))
    }

    /// Whether the open file holds exactly `bytes`, read in 64 KiB pieces.
    private static func holds(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { expected in
            withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 16) { buffer -> Bool in
                var offset = 0
                while true {
                    let count = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
                    if count < 0 && errno == EINTR { continue }
                    guard count >= 0, offset + count <= expected.count else { return false }
                    if count == 0 { return offset == expected.count }
                    guard memcmp(buffer.baseAddress!, expected.baseAddress! + offset, count) == 0 else { return false }
                    offset += count
                }
            }
        }
    }

    /// Calls `body` with every name in content bucket folder `folder` and what `fstatat`
    /// says of it (nil when it is gone).
    static func forEach(in folder: Int32, _ body: (String, stat?) -> Void) {
        guard folder >= 0 else { return }
        CacheScan.forEachName(in: folder) { name in
            var info = stat()
            body(name, fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil)
        }
    }

    /// Whether a content folder's `name` is garbage: not a content file's name, not a
    /// regular file, or a file no entry links any more (its only name is this one).
    static func isUnused(_ name: String, _ info: stat?) -> Bool {
        guard let info else { return false }
        return !isName(name) || (info.st_mode & S_IFMT) != S_IFREG || info.st_nlink <= 1
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        default: 16
        }
    }
}
