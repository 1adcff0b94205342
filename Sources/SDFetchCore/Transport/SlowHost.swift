/// A host whose answers took ``HostHealth/slowTransfer`` or longer during a run.
public struct SlowHost: Sendable, Equatable {
    /// `host` or `host:port`, as in the URLs.
    public let host: String
    /// Its transfers that were that slow.
    public let transfers: Int
    /// Their time in all, start to end.
    public let nanoseconds: UInt64

    package init(host: String, transfers: Int, nanoseconds: UInt64) {
        self.host = host
        self.transfers = transfers
        self.nanoseconds = nanoseconds
    }

    /// Seconds per slow transfer.
    public var averageSeconds: Double { Double(nanoseconds) / Double(max(1, transfers)) / 1e9 }
}
