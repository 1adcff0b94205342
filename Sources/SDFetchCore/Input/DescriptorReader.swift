import Glibc

/// Reads a descriptor in order: with `read`, or with `pread` from a given offset, which
/// leaves the descriptor's own offset alone (counting a list before it is read for real).
struct DescriptorReader {
    let fd: Int32
    /// Where the next `pread` starts; nil: plain `read`.
    private var offset: off_t?

    init(fd: Int32, from offset: off_t? = nil) {
        self.fd = fd
        self.offset = offset
    }

    /// Fills `buffer`; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputReadError) -> Int {
        do throws(SystemCallError) {
            guard let start = offset else {
                return try syscall(where: "read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            let count = try syscall(where: "pread") { pread(fd, buffer.baseAddress, buffer.count, start) }
            offset = start + off_t(count)
            return count
        } catch {
            throw InputReadError(error.description)
        }
    }
}
