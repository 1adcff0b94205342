/// What a sweep of one shard found.
struct ShardSweep: Sendable {
    var live: [SweptEntry] = []
    /// Files to remove whatever the age: no record, or not the recorded bytes.
    var broken: [ScannedFile] = []
    var temporaries: [ScannedFile] = []
    var strays: [String] = []
    /// The shard's bucket file before the folder was read (see ``CacheIndex/fileState(_:)``).
    var bucket: BucketFileState?
}
