import Foundation

/// Writes whole byte buffers to a file descriptor, retrying short writes and `EINTR`.
///
/// Errors other than `EINTR` end the write silently: a closed pipe (`sdfetch | head`)
/// must not stop the run; SIGPIPE is ignored by `@main` for the same reason.
enum FileDescriptorWriter {
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(fd, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
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
