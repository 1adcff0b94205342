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
