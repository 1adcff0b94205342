import FoundationEssentials
import Glibc
import SDFetchCore

/// Where `--summary FILE` goes, opened once when the options are checked (``SummaryFile``):
/// the file judged at the start is the file written at the end, whatever is renamed or
/// linked at its name during the run.
///
/// The name's last part is never followed when it is a link (`O_NOFOLLOW`): a link planted
/// in a shared folder cannot aim the summary at another file. A FIFO is the user's pipe to
/// a reader: opened without waiting (`O_NONBLOCK`), then written as any writer writes; one
/// that no process reads yet is opened again at the end, still without waiting, and only if
/// it is the same FIFO.
enum SummaryTarget: Equatable, Sendable {
    /// `-`: standard error, through the console.
    case standardError
    /// A descriptor of this process's, named as `/dev/stderr` (when `2>> run.log`) or
    /// `/dev/fd/N`: a stream the user's shell set up, written where it stands, never
    /// reopened (a reopened `/dev/stderr` is the file from its start, truncated).
    case stream(Int32)
    /// A file, FIFO or device opened at the start.
    case descriptor(Int32)
    /// A FIFO that no process was reading at the start.
    case unreadFIFO(path: String, device: UInt64, inode: UInt64)
    /// Not openable; the reason, said when the summary is due (the run still runs).
    case unwritable(String)

    /// Opens `path` for the summary of a run reading `inputs`; a usage error when it must
    /// not be replaced (``SummaryFile/refusal(of:path:inputs:)``) or is a link.
    static func open(_ path: String, inputs: [InputSource]) throws(UsageError) -> SummaryTarget {
        if path == "-" { return .standardError }
        if let fd = SummaryFile.streamDescriptor(path) { return .stream(fd) }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            let reason = errnoText()
            var info = stat()
            if code == ENXIO, lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO {
                return .unreadFIFO(path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            }
            if code == ELOOP {
                throw UsageError(
                    "--summary \(Escaping.terminal(path)): it is a symbolic link, which is not followed; name its target"
                )
            }
            return .unwritable(reason)
        }
        if let reason = SummaryFile.refusal(of: fd, path: path, inputs: inputs) {
            close(fd)
            throw UsageError("--summary \(Escaping.terminal(path)): \(reason)")
        }
        // Writes wait for a FIFO's reader, as a shell's `>` does.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return .descriptor(fd)
    }

    /// Writes `text`, replacing a regular file's contents, and closes what was opened; the
    /// reason when it cannot, else nil. Never waits for a FIFO's reader to appear.
    func write(_ text: String) -> String? {
        switch self {
        case .standardError: preconditionFailure("standard error is written through the console")
        case .unwritable(let reason): return reason
        case .stream(let fd):
            return Self.writeAll(text, to: fd)
        case .descriptor(let fd):
            defer { close(fd) }
            var info = stat()
            if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, ftruncate(fd, 0) != 0 { return errnoText() }
            return Self.writeAll(text, to: fd)
        case .unreadFIFO(let path, let device, let inode):
            let fd = Glibc.open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return errno == ENXIO ? "no process reads the FIFO" : errnoText() }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else {
                return "it was replaced during the run"
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return Self.writeAll(text, to: fd)
        }
    }

    private static func writeAll(_ text: String, to fd: Int32) -> String? {
        var text = text
        let written = text.withUTF8 { FileIO.writeAll(UnsafeRawBufferPointer($0), to: fd) }
        return written ? nil : errnoText()
    }
}
