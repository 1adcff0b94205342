import Glibc

/// What every fuzz target shares: the input as bytes, a leading byte to pick among a
/// target's modes, and the input as a file or descriptor for parsers that read one.
struct FuzzInput {
    let bytes: [UInt8]

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }

    /// The first byte (0 when empty): the target's mode switches.
    var mode: UInt8 { bytes.first ?? 0 }
    /// Everything after ``mode``.
    var rest: ArraySlice<UInt8> { bytes.dropFirst() }

    /// An unnamed file holding `bytes` (made in ``folder`` and unlinked at once), positioned
    /// at its start; the caller closes it. Its path is `/proc/self/fd/FD`.
    static func unnamedFile(_ bytes: some Collection<UInt8>) -> Int32 {
        var template = Array((folder + "/input-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        precondition(fd >= 0, "cannot make a file in \(folder)")
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        let array = Array(bytes)
        var written = 0
        while written < array.count {
            let count = array.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            precondition(count > 0, "cannot write the input file")
            written += count
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    /// A folder of this process's own for targets whose parser reads a directory.
    static let folder: String = {
        let path = "/tmp/sdfetch-fuzz-\(getpid())"
        mkdir(path, 0o700)
        return path
    }()

    /// Replaces `name` in ``folder`` with `bytes`.
    static func writeFile(_ name: String, _ bytes: some Collection<UInt8>) {
        let path = folder + "/" + name
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot write \(path)")
        let array = Array(bytes)
        _ = array.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
