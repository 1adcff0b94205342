
/// One meaningful input line (blank and comment lines never get this far).
public struct InputLine: Sendable {
    public let source: String
    public let number: Int
    /// Trimmed text; at most ``URLKey/maxLength`` + 1 bytes, longer lines are cut and flagged.
    public let text: String
    /// The line was longer than ``URLKey/maxLength``; `text` holds its start only.
    public let isOverlong: Bool
}
