/// What `sdfetch verify` found.
public struct VerifyReport: Sendable, Equatable {
    /// Entries whose bytes were hashed.
    public var checked = 0
    public var checkedBytes: Int64 = 0
    /// Entries or stray files removed, with why.
    public var removed: [Removed] = []
    /// Intact entries whose file had lost its stamp (a copy that did not keep mtimes).
    public var restamped = 0

    public struct Removed: Sendable, Equatable {
        /// The entry's URL; nil for a file without a record.
        public var url: String?
        public var path: String
        public var reason: String
    }

    public init() {}
}
