/// A tabular row whose URL an earlier row already named: it shares that row's fetch and
/// result, and brings its own place and columns (``FetchEvent/repeatedRows(_:)``).
public struct RepeatedRow: Sendable {
    /// The key whose result the row shares.
    public let digest: KeyDigest
    /// `FILE:LINE` of the row.
    public let source: String
    public let fields: RowFields

    public init(digest: KeyDigest, source: String, fields: RowFields) {
        self.digest = digest
        self.source = source
        self.fields = fields
    }
}
