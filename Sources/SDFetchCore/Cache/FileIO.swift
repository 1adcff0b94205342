import Foundation

/// The small file primitives every cache writer shares: one write-all loop and one
/// temporary-name scheme.
enum FileIO {
    /// Suffix of every temporary file the cache makes; `clean` removes such files once they
    /// are ``DiskCache/strayTemporaryAge`` old (their writer crashed).
    static let temporarySuffix = ".tmp"

    /// `<pid>-<random>.tmp`: unique across processes and threads.
    static func temporaryName() -> String {
        "\(getpid())-\(UInt64.random(in: 0...UInt64.max))\(temporarySuffix)"
    }

    /// Writes all of `bytes` to `fd`, resuming after short writes and `EINTR`; false (with
    /// `errno` set) on failure, such as a full disk.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = Foundation.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                return false
            }
            written += result
        }
        return true
    }

    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }
}

/// `strerror(errno)` in lower case, for failure details.
func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code)).lowercased()
}
