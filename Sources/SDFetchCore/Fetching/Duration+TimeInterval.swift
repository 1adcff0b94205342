import FoundationEssentials

extension Duration {
    /// Seconds as a `TimeInterval`, for date arithmetic.
    public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
