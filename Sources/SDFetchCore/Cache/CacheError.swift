/// A cache directory that cannot be used at all: ends the command (exit 3).
public struct CacheError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let detail: String

    public init(path: String, detail: String) {
        self.path = path
        self.detail = detail
    }

    public var description: String { "cache directory \(path): \(detail)" }
}
