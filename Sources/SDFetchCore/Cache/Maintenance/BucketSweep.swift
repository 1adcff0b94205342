/// What a sweep of one bucket found.
struct BucketSweep: Sendable {
    var live: [SweptEntry] = []
    /// Files to remove whatever the age: no record, or not the recorded bytes.
    var broken: [ScannedFile] = []
    var temporaries: [ScannedFile] = []
    var strays: [String] = []
    /// The bucket's index file before the folder was read (see ``CacheIndex/fileState(_:)``).
    var indexState: BucketFileState?
    /// The part of the index file the sweep read (its inode and the end of its last whole
    /// line): what counters made from this sweep account for (``BucketUsage``).
    var countedState: BucketFileState?
    /// The index read was a table of exactly one line per entry it names, every one of
    /// them live: compacting it would change nothing (``DiskCache/compact(_:keeping:removed:swept:unchanged:)``).
    var isCompact = false
}
