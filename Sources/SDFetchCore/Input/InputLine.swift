/// Where URLs come from: files in order, `-` for standard input.
public enum InputSource: Sendable, Equatable {
    case standardInput
    case file(String)

    /// The name used in `FILE:LINE` reports; `-` for stdin.
    public var name: String {
        switch self {
        case .standardInput: "-"
        case .file(let path): path
        }
    }
}

/// One meaningful input line (blank and comment lines never get this far).
public struct InputLine: Sendable {
    public let source: String
    public let number: Int
    /// Trimmed text; at most ``URLKey/maxLength`` + 1 bytes, longer lines are cut and flagged.
    public let text: String
    /// The line was longer than ``URLKey/maxLength``; `text` holds its start only.
    public let isOverlong: Bool
}

/// What the reader yields: lines, or a source that could not be read.
public enum InputItem: Sendable {
    case line(InputLine)
    case unreadable(source: String, detail: String)
}
