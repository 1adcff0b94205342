/// What the reader yields: lines, or a source that could not be read.
public enum InputItem: Sendable {
    case line(InputLine)
    case unreadable(source: String, detail: String)
}
