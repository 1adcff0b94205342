import Glibc

/// An entry's image file held open from the moment it was checked until its result is
/// delivered, so what is delivered is exactly what was checked.
///
/// A `clean` running beside a fetch may remove an entry between its check and `-o`'s copy:
/// right after a `304` confirmed it, say. Delivered from the held descriptor, the image
/// still arrives, whatever became of the name; and a pinned hit (``Fetcher/probe(_:spelling:pin:)``)
/// delivers the very bytes it hashed. Closed when the last reference goes.
public final class HeldImage: Sendable {
    let descriptor: Int32
    let bytes: Int64
    let modified: timespec

    init(descriptor: Int32, bytes: Int64, modified: timespec) {
        self.descriptor = descriptor
        self.bytes = bytes
        self.modified = modified
    }

    deinit { close(descriptor) }

    /// The held file as a ``CachedImage`` of its own (a duplicate descriptor): what the
    /// delivery step copies or links. Nil when no descriptor is left.
    public func opened() -> CachedImage? {
        let fd = dup(descriptor)
        guard fd >= 0 else { return nil }
        return CachedImage(descriptor: fd, bytes: bytes, modified: modified)
    }

    /// SHA-256 of the held bytes in hex, nil when they cannot be read whole.
    func sha256() -> String? {
        EntryFile.sha256(of: descriptor, expecting: bytes)
    }
}

extension DiskCache {
    /// `entry`'s file for `key`, opened and checked on the descriptor itself (a regular file
    /// of the recorded size and stamp, not sparse): nil when it is not, or is gone.
    func hold(_ entry: CacheEntry, for key: URLKey) -> HeldImage? {
        let digest = key.digest
        let fd = entries.with(Buckets.index(of: digest), create: false) { folder in
            folder >= 0 ? SafeOpen.file(digest.hex, in: folder, flags: O_RDONLY) : -1
        }
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, EntryFile.check(entry, info) == .intact else {
            close(fd)
            return nil
        }
        return HeldImage(descriptor: fd, bytes: Int64(info.st_size), modified: info.st_mtim)
    }
}
