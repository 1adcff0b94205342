internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// An entry file (`entries/ab/<digest>`): exactly the image bytes, nothing else, so `path`
/// and `--link` hand out the image itself.
///
/// Its mtime is the entry's *stamp*: set in whole seconds when the file is written and
/// never moved afterwards (uses are recorded in the index, not on the file). Anything that
/// writes the file moves its mtime, so a hit checks size and stamp with one `fstatat` and
/// never serves an edited, truncated or replaced file. A copy that did not keep mtimes
/// (`cp -r`) fails that check once: the file is then hashed against the recorded SHA-256,
/// and a match restores the stamp.
enum EntryFile {
    /// What one `fstatat` says about an entry file against its record.
    enum Check: Equatable {
        /// Size and stamp match: served without reading a byte.
        case intact
        /// Same size, another mtime (a copy that did not keep mtimes, or an edit): hash it.
        case unstamped
        /// Missing, not a regular file, another size, or sparse: not this entry.
        case changed
    }

    static func check(_ entry: CacheEntry, name: String, in bucket: Int32) -> Check {
        var info = stat()
        guard fstatat(bucket, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .changed }
        return check(entry, info)
    }

    /// ``check(_:name:in:)`` of what `fstat` said of an open file.
    static func check(_ entry: CacheEntry, _ info: stat) -> Check {
        guard (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) == entry.bytes, !isSparse(info) else {
            return .changed
        }
        return Int64(info.st_mtim.tv_sec) == entry.stamp && info.st_mtim.tv_nsec == 0 ? .intact : .unstamped
    }

    /// Whether a file's allocated blocks are far below its size: a hole where image bytes
    /// should be. The cache never writes one; a forged sparse entry would be served (and
    /// copied out) as gigabytes of zeros from a few kilobytes on disk. Files up to 1 MiB are
    /// never judged (inline data, tail packing); a compressing file system stores images,
    /// already compressed, at near their size.
    static func isSparse(_ info: stat) -> Bool {
        let size = Int64(info.st_size)
        guard size > 1 << 20 else { return false }
        return Int64(info.st_blocks) * 512 < size / 8
    }

    /// Whether the file's bytes still hash to the record's SHA-256; if so its stamp is set
    /// again, so the next hit is a plain ``check(_:name:in:)``.
    static func rehash(_ entry: CacheEntry, name: String, in bucket: Int32) -> Bool {
        let fd = SafeOpen.file(name, in: bucket, flags: O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let digest = sha256(of: fd, expecting: entry.bytes), digest == entry.sha256 else { return false }
        setStamp(fd, entry.stamp)
        return true
    }

    /// SHA-256 of the whole open file in hex; nil when it cannot be read or its size is not
    /// `expecting` (when given).
    static func sha256(of fd: Int32, expecting size: Int64? = nil) -> String? {
        var hasher = SHA256()
        var total: Int64 = 0
        let ok = withUnsafeTemporaryAllocation(byteCount: 1 << 16, alignment: 16) { buffer -> Bool in
            while true {
                guard
                    let count = try? syscall(
                        where: "pread", { pread(fd, buffer.baseAddress, buffer.count, off_t(total)) })
                else { return false }
                if count == 0 { return true }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                total += Int64(count)
                if let size, total > size { return false }
            }
        }
        guard ok, size == nil || total == size else { return nil }
        return hex(hasher.finalize())
    }

    static func sha256(of bytes: UnsafeRawBufferPointer) -> String {
        hex(SHA256.hash(data: bytes))
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        String(unsafeUninitializedCapacity: 64) { out in
            var index = 0
            digest.withUnsafeBytes { raw in
                for byte in raw {
                    out[index] = hexDigit(byte >> 4)
                    out[index + 1] = hexDigit(byte & 0xF)
                    index += 2
                }
            }
            return 64
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The stamp for a file written at `date`: whole seconds, which every archive format keeps.
    static func stamp(for date: Date) -> Int64 {
        Int64(FileTime.timespec(date).tv_sec)
    }

    /// Sets the open file's mtime to `stamp` seconds (nanoseconds 0), its atime to now.
    /// Best effort: explicit times need the file's owner; a file without its stamp is only
    /// hashed again on its next hit.
    static func setStamp(_ fd: Int32, _ stamp: Int64) {
        var times = [FileTime.omitted, timespec(tv_sec: Int(stamp), tv_nsec: 0)]
        _ = futimens(fd, &times)
    }
}
