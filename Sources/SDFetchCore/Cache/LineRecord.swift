import Foundation

/// The small line-based text format of `.meta` files and blacklist records.
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
    static func encode(magic: String, _ values: [String]) -> [UInt8] {
        var text = magic + "\n"
        for value in values {
            text.unicodeScalars.append(contentsOf: value.unicodeScalars.lazy.filter { $0.value >= 0x20 && $0.value != 0x7F })
            text += "\n"
        }
        text += terminator + "\n"
        return Array(text.utf8)
    }

    /// The `count` values of a record starting with `magic`, or nil when the bytes are not one.
    static func decode(magic: String, count: Int, from bytes: UnsafeRawBufferPointer) -> [Substring]? {
        guard let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // magic + values + terminator + the empty piece after the final newline
        guard lines.count == count + 3, lines[0] == magic, lines[count + 1] == terminator, lines[count + 2].isEmpty
        else { return nil }
        return Array(lines[1...count])
    }

    /// Reads a whole small file (at most `limit` bytes) and hands its bytes and `stat` to `body`.
    ///
    /// One `open`, `fstat`, `read`, `close`; nil when the file is missing, too large or unreadable.
    static func read<T>(_ path: String, limit: Int = 64 << 10, _ body: (UnsafeRawBufferPointer, stat) -> T?) -> T? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size <= limit else { return nil }
        let size = Int(info.st_size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < size {
            let count = Foundation.read(fd, buffer.baseAddress! + filled, size - filled)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            filled += count
        }
        return body(UnsafeRawBufferPointer(buffer), info)
    }

    /// Nanoseconds since 1970 as decimal text: exact for whole-second and millisecond dates.
    static func encode(_ date: Date) -> String {
        let time = FileTime.timespec(date)
        return String(Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    static func decodeDate(_ text: Substring) -> Date? {
        guard let nanoseconds = Int64(text) else { return nil }
        let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return FileTime.date(timespec(tv_sec: Int(seconds), tv_nsec: Int(remainder)))
    }
}
