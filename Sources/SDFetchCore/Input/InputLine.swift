/// One meaningful input line, or one row of a tabular list (blank and comment lines never
/// get this far).
public struct InputLine: Sendable {
    public let source: String
    /// The line number; for a row, the line it starts on (a quoted CSV field may span lines).
    public let number: Int
    /// Trimmed text, for a row its URL cell; at most ``URLKey/maxLength`` + 1 bytes, longer
    /// text is cut and flagged.
    public let text: String
    /// The text was longer than ``URLKey/maxLength``; `text` holds its start only.
    public let isOverlong: Bool
    /// A row's other columns; nil for a plain line.
    public let fields: RowFields?
    /// A row's pinned SHA-256 (64 lower-case hex digits): the bytes it must have.
    public let pin: String?
    /// Why the row is unusable although it was read (a wrong number of fields, broken
    /// JSON, a malformed pin): it ends `invalid` with this reason.
    public let problem: String?

    public init(
        source: String, number: Int, text: String, isOverlong: Bool, fields: RowFields? = nil, pin: String? = nil,
        problem: String? = nil
    ) {
        self.source = source
        self.number = number
        self.text = text
        self.isOverlong = isOverlong
        self.fields = fields
        self.pin = pin
        self.problem = problem
    }
}
