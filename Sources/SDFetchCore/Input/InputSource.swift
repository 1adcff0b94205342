/// Where URLs come from: files in order, `-` for standard input, or a list held in memory.
public enum InputSource: Sendable, Equatable {
    case standardInput
    case file(String)
    /// URLs given as strings, one per element, read like the lines of a file (trimmed;
    /// blank and `#` elements skipped) and reported as `name:N`, N counting from 1. The
    /// command line's URL arguments come this way; so does a library caller's array.
    case list(name: String, [String])

    /// The name used in `FILE:LINE` reports; `-` for stdin.
    public var name: String {
        switch self {
        case .standardInput: "-"
        case .file(let path): path
        case .list(let name, _): name
        }
    }
}
