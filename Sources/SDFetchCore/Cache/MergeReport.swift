/// What `sdfetch merge` did.
public struct MergeReport: Sendable, Equatable {
    /// Entries copied in (new here, or newer than the entry here).
    public var merged = 0
    public var mergedBytes: Int64 = 0
    /// Entries left out because this cache's entry is as new or newer.
    public var kept = 0
    /// Source entries whose file is missing or does not match its record, whose record
    /// claims more than the byte budget, whose URL does not hash to the name it is filed
    /// under, or whose bytes are not the image the record claims (sniffed and verified as a
    /// download would be).
    public var bad = 0
    /// Failed-URL records copied in (new here, or newer).
    public var mergedFailed = 0
    /// Why this cache could not take a write (a full disk, a read-only file system): the
    /// merge stopped there. Never counted as `bad`: the source's entry was good.
    public var writeFailure: String?

    public init() {}
}
