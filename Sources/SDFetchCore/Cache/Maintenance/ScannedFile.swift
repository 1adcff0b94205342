/// A regular file in a bucket folder as one `fstatat` sees it.
struct ScannedFile: Sendable {
    let name: String
    let bytes: Int64
    /// Its mtime in nanoseconds since 1970.
    let modifiedAt: Int64
    let inode: UInt64
}
