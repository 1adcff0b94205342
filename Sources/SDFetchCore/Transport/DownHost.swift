/// A host given up during a run (`host-down`), and why.
public struct DownHost: Sendable, Equatable {
    /// `host` or `host:port`, as in the URLs.
    public let host: String
    /// The kind of the failure that ended it: `dns` for a name that does not resolve.
    public let kind: FetchFailure.Kind
    /// Lower-case, no final period: "its name does not resolve (...)".
    public let cause: String

    public init(host: String, kind: FetchFailure.Kind, cause: String) {
        self.host = host
        self.kind = kind
        self.cause = cause
    }
}
