/// The columns of a tabular row other than its URL, in the order the row gives them,
/// carried into the row's result (`--json`'s `fields`).
public struct RowFields: Sendable, Equatable {
    /// A column's value.
    public enum Value: Sendable, Equatable {
        /// A CSV or TSV cell, or a JSON string, decoded.
        case text(String)
        /// Any other JSON value (number, boolean, null, array, object), as its source text,
        /// already checked to be valid JSON.
        case json(String)
    }

    /// Column names; for CSV and TSV one array shared by every row of a file.
    public let names: [String]
    public let values: [Value]

    public init(names: [String], values: [Value]) {
        precondition(names.count == values.count, "one value per column name")
        self.names = names
        self.values = values
    }

    public var isEmpty: Bool { names.isEmpty }
}
