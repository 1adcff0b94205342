import FoundationEssentials
import Glibc
import SDFetchCore

/// Writes whole byte buffers to a file descriptor through the one write-all loop
/// (``FileIO/writeAll(_:to:)``).
///
/// A failure ends the write silently: a closed pipe (`sdfetch | head`) must not stop the
/// run; SIGPIPE is ignored by `@main` for the same reason.
enum FileDescriptorWriter {
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        if !FileIO.writeAll(bytes, to: fd) { OutputFailure.note(fd: fd, errno: errno) }
    }

    static func write(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { write($0, to: fd) }
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }
}

/// Unbuffered standard error, for messages outside a fetch run (usage errors, `clean`, `path`).
enum StandardError {
    static func write(_ text: String) {
        FileDescriptorWriter.write(text, to: STDERR_FILENO)
    }
}
