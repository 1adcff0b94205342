/// A cache directory that cannot be used at all: ends the command (exit 3).
public struct CacheError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let detail: String
    /// Set when the directory holds another version of the on-disk format (see ``CacheFormat``).
    public let otherFormat: String?

    public init(path: String, detail: String, otherFormat: String? = nil) {
        self.path = path
        self.detail = detail
        self.otherFormat = otherFormat
    }

    public var description: String { "cache directory \(path): \(detail)" }
}
