import FoundationEssentials
import Glibc

/// Writes a file so that readers see either nothing or the whole content.
///
/// The bytes go to a uniquely named file in a temporary directory on the same file system
/// as the target, get their modification time set explicitly (blacklist records keep
/// their time in it), and are then renamed over the target. A
/// crash leaves only a stray `*.tmp` file, which `clean` removes at once, its writer gone
/// (``WriterTemporary``).
/// A failed write (full disk) removes its temporary file and leaves the target untouched.
///
/// No `fsync`: the guarantee covers process crashes and `kill -9` (the page cache
/// survives them); a power loss may lose recent entries, which the cache tolerates.
enum AtomicWrite {
    /// Writes `bytes` to a new temporary file in `directory` and returns its path.
    static func writeTemporary(_ bytes: [UInt8], in directory: String, modified: Date?) throws(FetchFailure) -> String {
        let temporary = "\(directory)/\(FileIO.temporaryName())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FetchFailure(.io, "cannot create \(temporary): \(errnoText())") }
        // Locked while written (WriterTemporary); the rename follows at once, within its grace.
        WriterTemporary.hold(fd)
        guard FileIO.writeAll(bytes, to: fd) else {
            let reason = errnoText()
            close(fd)
            unlink(temporary)
            throw FetchFailure(.io, "cannot write \(temporary): \(reason)")
        }
        if let modified {
            var times = [FileTime.timespec(modified), FileTime.timespec(modified)]
            _ = futimens(fd, &times)
        }
        guard close(fd) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw FetchFailure(.io, "cannot write \(temporary): \(reason)")
        }
        return temporary
    }

    /// Renames `temporary` over `path`; on failure the temporary file is removed.
    static func commit(_ temporary: String, to path: String) throws(FetchFailure) {
        guard rename(temporary, path) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw FetchFailure(.io, "cannot rename into \(path): \(reason)")
        }
    }

    /// Writes `bytes` to `path` atomically (temporary file, then rename).
    static func write(
        _ bytes: [UInt8], to path: String, temporaryDirectory: String, modified: Date? = nil
    ) throws(FetchFailure) {
        let temporary = try writeTemporary(bytes, in: temporaryDirectory, modified: modified)
        try commit(temporary, to: path)
    }
}
