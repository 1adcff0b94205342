/// A regular file in a bucket folder as one `fstatat` sees it.
struct ScannedFile: Sendable {
    let name: String
    let bytes: Int64
    /// Its mtime in nanoseconds since 1970.
    let modifiedAt: Int64
    let inode: UInt64
    /// Its hard links, 0 when not `stat`ed: more than an entry name and a content name
    /// (``ContentFile``) means other entries share it.
    var links: Int = 0
}
