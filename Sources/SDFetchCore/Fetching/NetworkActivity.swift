/// What the network side of a run is doing right now, for a progress display that must say
/// why nothing finishes during a stall: transfers under way, URLs waiting to retry, hosts
/// given up. Read at the display's own pace (``Fetcher/networkActivity``).
public struct NetworkActivity: Sendable, Equatable {
    /// Transfers running in the engine (connecting, or waiting for or receiving bytes).
    public var inFlight: Int
    /// URLs waiting out a backoff before their next try.
    public var retrying: Int
    /// Hosts given up so far (`host-down`), those remembered from an earlier run included.
    public var hostsDown: Int

    public init(inFlight: Int = 0, retrying: Int = 0, hostsDown: Int = 0) {
        self.inFlight = inFlight
        self.retrying = retrying
        self.hostsDown = hostsDown
    }
}
