/// Shard K of N by key hash (`--shard K/N`, 0-based), so N jobs split one list exactly.
public struct Shard: Sendable, Equatable {
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count > 0, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    public func contains(_ digest: KeyDigest) -> Bool {
        Int(digest.high % UInt64(count)) == index
    }

    /// Whether this shard reports what has no key to hash (an `invalid` line): shard 0
    /// alone, so the N shards' reports put together hold each such line once.
    public var reportsKeylessLines: Bool { index == 0 }
}
