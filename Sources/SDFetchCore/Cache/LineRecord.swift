import FoundationEssentials
import Glibc

/// The small line-based text format of blacklist records (one file per failed URL).
///
/// Layout: a magic first line naming the kind and version, one value per line in a fixed
/// order, then `end`. JSON was the first format; decoding it with Foundation cost more
/// than the whole rest of a warm-run hit, while this parses in a single pass over a few
/// hundred bytes. The `end` line and the exact line count reject truncated or foreign
/// files, which readers then treat as missing (never a crash). Values are stripped of
/// control characters when written, so no value can contain a line break; URLs are
/// `URLKey` text, which never contains whitespace.
struct LineRecord {
    static let terminator = "end"

    /// Encodes `values` under `magic`.
    ///
    /// Works on UTF-8 bytes: every control character (C0, DEL) is a single byte there and
    /// no byte of a multi-byte sequence is below 0x80, so dropping them keeps valid text.
    static func encode(magic: String, _ values: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.reduce(magic.utf8.count + terminator.utf8.count + 2) { $0 + $1.utf8.count + 1 })
        bytes += magic.utf8
        bytes.append(0x0A)
        for value in values {
            bytes += value.utf8.lazy.filter { $0 >= 0x20 && $0 != 0x7F }
            bytes.append(0x0A)
        }
        bytes += terminator.utf8
        bytes.append(0x0A)
        return bytes
    }

    /// The byte ranges of the `count` values of a record starting with `magic`, or nil when
    /// the bytes are not one. Works on raw bytes (no `String` until a caller asks for a
    /// field): it runs once per entry that `clean` removes.
    static func decode(magic: String, count: Int, from bytes: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var lines: [Range<Int>] = []
        lines.reserveCapacity(count + 2)
        var start = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            lines.append(start..<index)
            start = index + 1
            guard lines.count <= count + 2 else { return nil }
        }
        // magic + values + terminator, and nothing after the final newline
        guard lines.count == count + 2, start == bytes.count,
            bytes[lines[0]].elementsEqual(magic.utf8), bytes[lines[count + 1]].elementsEqual(terminator.utf8)
        else { return nil }
        return Array(lines[1...count])
    }

    /// A field as text; nil when it is not valid UTF-8.
    static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        String(validating: UnsafeRawBufferPointer(rebasing: bytes[range]).bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// A field as a decimal integer (optional leading `-`); nil for anything else.
    static func integer(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int64? {
        IndexRecord.integer(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// `O_NOATIME` (the same value in asm-generic and x86 `fcntl.h`; Glibc's Swift module
    /// does not export it). Under `relatime` a read of a record file would otherwise dirty
    /// its inode for an atime nobody uses.
    static let noAccessTime: Int32 = 0o1000000

    /// Largest record file read: a URL is at most 8,192 bytes and details are short.
    static let limit = 16 << 10

    /// Reads a whole small file and hands its bytes and still-open descriptor to `body`.
    ///
    /// `path` is relative to `directory` (a descriptor) or absolute. One `open`, one `read`
    /// into a stack buffer (a short read of a regular file is its end), `close`: no `fstat`,
    /// since this runs once per blacklist lookup. Never follows a link and never blocks (a
    /// FIFO reads as empty). Nil when the file is missing, longer than ``limit`` or unreadable.
    static func read<T>(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, _ body: (UnsafeRawBufferPointer, Int32) -> T?
    ) -> T? {
        var fd = openat(directory, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | noAccessTime)
        // O_NOATIME is refused (EPERM) on files owned by another user: read them plainly.
        if fd < 0 && errno == EPERM { fd = openat(directory, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(byteCount: limit + 1, alignment: 8) { buffer -> T? in
            guard let count = try? syscall(where: "read", { Glibc.read(fd, buffer.baseAddress!, limit + 1) }),
                count > 0, count <= limit
            else { return nil }
            return body(UnsafeRawBufferPointer(rebasing: buffer[..<count]), fd)
        }
    }

    /// Nanoseconds since 1970 as decimal text: exact for whole-second and millisecond dates.
    static func encode(_ date: Date) -> String {
        String(FileTime.nanoseconds(date))
    }

    /// A date field (nanoseconds since 1970, as `encode` writes it), bounded like every index
    /// time (1970 to ``IndexRecord/maxTime``): nil outside, a damaged record.
    static func date(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Date? {
        guard let nanoseconds = IndexRecord.time(UnsafeRawBufferPointer(rebasing: bytes[range])) else { return nil }
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return FileTime.date(timespec(tv_sec: Int(seconds), tv_nsec: Int(remainder)))
    }
}
