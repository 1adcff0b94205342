import Glibc

/// An entry's image file, open for reading: what a copy of the image reads, or what a hard
/// link names (the CLI's `-o`). Obtained from ``DiskCache/openImage(for:)``, so a caller
/// never builds a path into the cache; closed when the value goes away.
///
/// The file is the cache's own: a copy must not be written through it, and a hard link to
/// it is the image itself (the cache's check refuses an entry edited through the link).
public struct CachedImage: ~Copyable {
    /// Open read-only, never through a link, and known to be a regular file.
    public let descriptor: Int32
    public let bytes: Int64
    /// The file's mtime: the entry's stamp (<doc:OnDiskFormat>), which a copy takes over so a
    /// re-run recognises it by size and time.
    public let modified: timespec

    /// Why an entry's image could not be opened: gone (another process replaced or evicted
    /// it), or not a regular file.
    public struct Unreadable: Error, Sendable {
        public let detail: String
        /// The entry's file is gone: a `clean`, `verify` or trim removed it after the lookup
        /// found it. The run fetches the URL again (``FetchResult/entryWasRemoved``).
        public var isGone = false

        public init(detail: String, isGone: Bool = false) {
            self.detail = detail
            self.isGone = isGone
        }
    }

    deinit { close(descriptor) }

    /// Hard-links the image as `name` in the directory `folder`; false, with `errno` set,
    /// when it cannot (`EEXIST`: the name is taken; `EXDEV`: another file system).
    public func link(as name: String, in folder: Int32) -> Bool {
        UnnamedFileLink.link(descriptor, as: name, in: folder)
    }
}
