/// How the input lists are read: their format and which columns matter
/// (sdfetch(1) `--input-format`, `--url-column`, `--sha256-column`).
public struct InputOptions: Sendable, Equatable {
    /// The format of every source; nil: each file's by its name (``InputFormat/implied(byName:)``).
    public var format: InputFormat?
    /// The column (JSON Lines: the key) holding a row's URL.
    public var urlColumn = "url"
    /// The column (key) pinning a row's expected SHA-256; rows without it are not pinned.
    public var sha256Column = "sha256"
    /// `--sha256-column` was given: a CSV or TSV header without that column is an error,
    /// not an unpinned table.
    public var requiresSHA256Column = false

    public init() {}

    /// The format `source` is read in.
    public func format(of source: InputSource) -> InputFormat {
        if let format { return format }
        switch source {
        case .standardInput: return .lines
        case .list: return .lines
        case .file(let path): return InputFormat.implied(byName: path)
        }
    }

    /// Whether `source` is read through gzip: a file named `*.gz`.
    public func isGzipped(_ source: InputSource) -> Bool {
        guard case .file(let path) = source else { return false }
        return InputFormat.isGzipped(name: path)
    }
}
