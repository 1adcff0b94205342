import FoundationEssentials
import Glibc

/// Counts the meaningful lines of a regular file before it is read for real
/// (<doc:Fetching#Input>: the progress bar shows a true total and ETA from the start).
///
/// Uses the same rule as ``LineSplitter`` (a BOM, blank lines, `#` comments and surrounding
/// whitespace do not count) but never builds a line: `memchr` jumps from one newline to
/// the next, so a file is counted at close to the speed it is read from the page cache.
enum LineCounter {
    private static let chunkBytes = 1 << 20

    /// Meaningful lines of the regular file `path`, or nil when it is not one (a FIFO, a
    /// terminal, `/dev/stdin`) or cannot be opened: such input is counted as it is read.
    static func meaningfulLines(ofFile path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return count(fd, from: 0)
    }

    /// Meaningful lines from the current offset of `fd` to its end when it is a regular file
    /// (`sdfetch < list.txt`); the offset is left where it was.
    static func meaningfulLines(ofDescriptor fd: Int32) -> Int? {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset >= 0 else { return nil }
        return count(fd, from: offset)
    }

    /// Where the scan is within the current line.
    private enum Place {
        /// Only whitespace so far: the line's first visible byte decides.
        case leading
        /// The line counts (or is a comment); skip to its newline.
        case rest
    }

    private static func count(_ fd: Int32, from start: off_t) -> Int? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var lines = 0
        var place = Place.leading
        var isFirstChunk = true
        var offset = start
        while true {
            guard let count = try? syscall(where: "pread", { pread(fd, buffer.baseAddress, buffer.count, offset) })
            else { return nil }
            if count == 0 { break }
            offset += off_t(count)
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            var index = 0
            if isFirstChunk {
                isFirstChunk = false
                if start == 0, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
            }
            while index < count {
                switch place {
                case .leading:
                    let byte = bytes[index]
                    if byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A {
                        index += 1
                    } else {
                        if byte != UInt8(ascii: "#") { lines += 1 }
                        place = .rest
                    }
                case .rest:
                    guard let newline = memchr(bytes.baseAddress! + index, 0x0A, count - index) else {
                        index = count
                        continue
                    }
                    index = bytes.baseAddress!.distance(to: UnsafeRawPointer(newline)) + 1
                    place = .leading
                }
            }
        }
        return lines
    }
}
