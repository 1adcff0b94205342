/// How long a cache waits out other writers. The defaults suit every real run; a test
/// passes shorter ones rather than sleeping through them (`DiskCache(directory:waits:)`).
public struct CacheWaits: Sendable {
    /// How long a fetch waits for a bucket lock before it takes the holder as stuck (a
    /// stopped process): every holder keeps one for milliseconds.
    public var bucketLock: Duration
    /// How long an unlocked named temporary must have stood still before `clean` counts it
    /// abandoned: the moment between a file's creation and its lock (``WriterTemporary``).
    public var writerGrace: Duration

    public init(bucketLock: Duration = .seconds(2), writerGrace: Duration = .seconds(2)) {
        self.bucketLock = bucketLock
        self.writerGrace = writerGrace
    }

    public static let standard = CacheWaits()
}
