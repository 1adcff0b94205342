import Glibc

/// Counts the rows of a tabular regular file before it is read for real, so the progress
/// bar's total is true from the start (<doc:Fetching#Input>): rows, not lines, since a
/// quoted CSV field may span lines.
///
/// Runs the same ``DelimitedRecordParser`` as the read, keeping no bytes. A `*.gz` list is
/// inflated for the count too: zlib inflates at several hundred MB/s, so a list of a
/// million rows costs a fraction of a second before the first request.
enum RowCounter {
    private static let chunkBytes = 1 << 20

    /// Rows of the regular file `path` (its header not counted; a gzipped plain list: its
    /// meaningful lines), or nil when it is not one
    /// or cannot be read to its end.
    static func rows(ofFile path: String, format: InputFormat, isGzipped: Bool) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return count(SourceBytes(DescriptorReader(fd: fd, from: 0), isGzipped: isGzipped), format: format)
    }

    /// Rows from the current offset of `fd` to its end when it is a regular file
    /// (`sdfetch --input-format csv < list.csv`); the offset is left where it was.
    static func rows(ofDescriptor fd: Int32, format: InputFormat) -> Int? {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset >= 0 else { return nil }
        return count(SourceBytes(DescriptorReader(fd: fd, from: offset), isGzipped: false), format: format)
    }

    private static func count(_ source: SourceBytes, format: InputFormat) -> Int? {
        var source = source
        defer { source.end() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var parser = DelimitedRecordParser(RowSplitter.layout(of: format), keepsBytes: false)
        // A gzipped plain list: its lines by the plain rule (comments do not count).
        var lines = format == .lines ? LineSplitter(source: "") : nil
        var scratch: [InputItem] = []
        var records = 0
        while true {
            guard let count = try? source.read(into: buffer) else { return nil }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            if lines != nil {
                lines!.feed(chunk, into: &scratch)
                records += scratch.count
                scratch.removeAll(keepingCapacity: true)
            } else {
                parser.feed(chunk) { _ in records += 1 }
            }
        }
        if lines != nil {
            lines!.finish(into: &scratch)
            records += scratch.count
        } else {
            parser.finish { _ in records += 1 }
        }
        let hasHeader = format == .csv || format == .tsv
        return hasHeader ? max(0, records - 1) : records
    }
}
