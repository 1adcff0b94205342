/// One entry as a sweep sees it, in the few numbers a trim needs: no strings, so a sweep of
/// a million entries holds tens of megabytes, not the entries' records.
struct SweptEntry: Sendable {
    let bucket: Int
    let digest: KeyDigest
    /// The entry file as scanned, to check under the lock that it is still that file.
    let inode: UInt64
    let fileBytes: Int64
    /// The file's hard links as scanned (0: not `stat`ed).
    let links: Int
    /// The file's mtime (ns), the record's stored and last-use times (ns).
    let modifiedAt: Int64
    let storedAt: Int64
    let accessedAt: Int64
    /// File and index line: the entry's share of the cache's size.
    let bytes: Int64

    init(bucket: Int, digest: KeyDigest, file: ScannedFile, entry: CacheEntry) {
        self.init(
            bucket: bucket, digest: digest, file: file, storedAt: FileTime.nanoseconds(entry.storedAt),
            accessedAt: FileTime.nanoseconds(entry.accessedAt), lineBytes: IndexRecord.lineLength(of: entry))
    }

    init(bucket: Int, digest: KeyDigest, file: ScannedFile, storedAt: Int64, accessedAt: Int64, lineBytes: Int) {
        self.bucket = bucket
        self.digest = digest
        inode = file.inode
        fileBytes = file.bytes
        links = file.links
        modifiedAt = file.modifiedAt
        self.storedAt = storedAt
        self.accessedAt = accessedAt
        bytes = file.bytes + Int64(lineBytes)
    }

    var file: ScannedFile {
        ScannedFile(name: digest.hex, bytes: fileBytes, modifiedAt: modifiedAt, inode: inode, links: links)
    }
}
