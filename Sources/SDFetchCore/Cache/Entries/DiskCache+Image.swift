import Glibc

extension DiskCache {
    /// `key`'s image file, opened for reading (the CLI's `-o` copies or links it): the one
    /// way out of the cache for an image's bytes, so callers never depend on where an
    /// entry's file lives (<doc:OnDiskFormat>). Opened relative to its bucket's folder, never
    /// through a link (``SafeOpen``).
    ///
    /// The file is the one a lookup found intact a moment ago; another process may have
    /// replaced it since, and the copy then holds the newer image, with that image's stamp.
    public func openImage(for key: URLKey) throws(CachedImage.Unreadable) -> CachedImage {
        let digest = key.digest
        let fd = entries.with(Buckets.index(of: digest), create: false) { folder in
            folder >= 0 ? SafeOpen.file(digest.hex, in: folder, flags: O_RDONLY) : -1
        }
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0 else {
            let (reason, isGone) = (errnoText(), errno == ENOENT)
            if fd >= 0 { close(fd) }
            throw CachedImage.Unreadable(
                detail: "cannot read the cache's file for \(key.redacted): \(reason)", isGone: isGone)
        }
        return CachedImage(descriptor: fd, bytes: Int64(info.st_size), modified: info.st_mtim)
    }
}
