/// A bucket's index file: its identity and length (see ``CacheIndex/fileState(_:)``).
struct BucketFileState: Sendable, Equatable {
    let inode: UInt64
    let size: Int64
}
