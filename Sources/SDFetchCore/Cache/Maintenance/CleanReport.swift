import FoundationEssentials

/// What `clean` or the end-of-run trim removed (or, in a dry run, would remove) and what remains.
public struct CleanReport: Sendable, Equatable {
    public var removedEntries = 0
    /// Bytes of every removed entry (file and index line).
    public var removedBytes: Int64 = 0
    public var removedFailed = 0
    /// Host-down records (``HostDownMemory``) older than a day, or damaged.
    public var removedHosts = 0
    /// Stray temporary files, entry files without a record or not matching it, and
    /// anything that is not a regular file (links, FIFOs), removed themselves, never their targets.
    public var removedTemp = 0
    /// Entries and their bytes remaining afterwards.
    public var entries = 0
    public var bytes: Int64 = 0
    /// URLs of the removed entries, in removal order (LRU order for trimmed ones).
    public var removedURLs: [String] = []
    /// The trim knew the cache was within the cap without scanning it: nothing was
    /// removed, and `entries` and `bytes` were not counted.
    public var wasSkipped = false
    /// The end-of-run trim found the maintenance lock held (a `clean`, `verify` or `merge`
    /// running, or stopped): it did nothing and left the work to the next run or `clean`.
    public var wasDeferred = false
    /// The end-of-run trim's entries to keep to last (the run's own): how many it found
    /// and their bytes, before anything was removed.
    public var protectedEntries = 0
    public var protectedBytes: Int64 = 0
    /// How many of them it removed all the same, because they alone exceed the cap: the
    /// next run fetches them again.
    public var removedProtectedEntries = 0
    /// `clean`'s steps in the order they ran, each with its count and time.
    public var steps: [CleanStep] = []

    public init() {}
}
