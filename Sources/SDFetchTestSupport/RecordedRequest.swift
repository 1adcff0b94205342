/// A request as the server saw it.
public struct RecordedRequest: Sendable {
    public var path: String
    public var headers: [(String, String)]
    /// When the server had read the whole request (server-side clock, for timing asserts).
    public var receivedAt: ContinuousClock.Instant = .now

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
