import FoundationEssentials
import Glibc

/// The small file primitives every writer shares: the one write-all loop and the one
/// temporary-name scheme (the cache's files, its index compaction and the CLI's output).
package enum FileIO {
    /// Suffix of every temporary file the cache makes; `clean` removes such files once they
    /// are ``DiskCache/strayTemporaryAge`` old (their writer crashed).
    package static let temporarySuffix = ".tmp"

    /// `<prefix><pid>-<random>.tmp`: unique across processes and threads. A `prefix` of
    /// `.` hides the file from a plain `ls` of a folder people look at.
    package static func temporaryName(prefix: String = "") -> String {
        "\(prefix)\(getpid())-\(UInt64.random(in: 0...UInt64.max))\(temporarySuffix)"
    }

    /// Writes all of `bytes` to `fd`, resuming after short writes (and, through ``syscall(where:_:)``,
    /// `EINTR`); false on failure, such as a full disk, with `errno` still set for the message.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var written = 0
        while written < bytes.count {
            do throws(SystemCallError) {
                let count = try syscall(where: "write") { Glibc.write(fd, base + written, bytes.count - written) }
                // 0 for a non-empty write: nothing more will go (a full pipe closed, a device end).
                if count == 0 { return false }
                written += count
            } catch {
                return false
            }
        }
        return true
    }

    package static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }
}
