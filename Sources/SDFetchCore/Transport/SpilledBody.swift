internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// A response body that went to an unnamed file while it arrived, so a transfer holds at
/// most ``spillThreshold`` bytes of it in memory whatever the body's size: memory is bound
/// by `-j` x the threshold, not `-j` x `--max-bytes`.
///
/// The file is created with `O_TMPFILE` in the cache's `tmp/` folder, so the store can name
/// it as the entry without copying a byte (``DiskCache``), and it vanishes when its last
/// descriptor closes: a failed, refused or interrupted download leaves nothing behind.
public final class SpilledBody: Sendable {
    /// Bodies up to this size stay in memory; the first byte past it moves the body to a file.
    /// Images are mostly far below it, so a typical cold run never touches a spill file.
    public static let spillThreshold = 256 << 10

    /// Open read-write on the unnamed file; closed in `deinit`.
    let fd: Int32
    /// The body's size in bytes.
    public let count: Int64

    init(fd: Int32, count: Int64) {
        self.fd = fd
        self.count = count
    }

    deinit { close(fd) }

    /// An unnamed file in `folder`, or nil (and `errno`) where `O_TMPFILE` is not supported:
    /// the body then stays in memory.
    static func create(in folder: Int32) -> Int32? {
        let fd = openat(folder, ".", O_RDWR | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644)
        return fd >= 0 ? fd : nil
    }

    /// The whole body, read back for verification; nil when the file cannot be read whole.
    ///
    /// Verification runs on the cooperative pool, one body per thread, so at most a few
    /// bodies are in memory at once however many transfers are running.
    public func bytes() -> [UInt8]? {
        guard count <= Int64(Int.max) else { return nil }
        let size = Int(count)
        var complete = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size {
                let start = offset
                guard
                    let count = try? syscall(
                        where: "pread", { pread(fd, buffer.baseAddress! + start, size - start, off_t(start)) }),
                    count > 0
                else { break }
                offset += count
            }
            complete = offset == size
            initialized = complete ? size : 0
        }
        return complete ? bytes : nil
    }
}
