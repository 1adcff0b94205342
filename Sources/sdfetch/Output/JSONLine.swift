import SDFetchCore

/// A hand-written JSON object builder for one output line, keys in insertion order.
///
/// Hand-written rather than `JSONSerialization` so the key order is stable (readable
/// diffs of reports), numbers print as integers, and strings pass through
/// ``Escaping/json(_:)`` like every other printer's text.
struct JSONLine {
    private var members: [String] = []

    init() {}

    mutating func add(_ key: String, _ value: String?) {
        append(key, value.map { Escaping.json($0) } ?? "null")
    }

    mutating func add(_ key: String, _ value: Int?) {
        append(key, value.map { String($0) } ?? "null")
    }

    mutating func add(_ key: String, _ value: Int64?) {
        append(key, value.map { String($0) } ?? "null")
    }

    /// A number with up to three decimals (`1.234`).
    mutating func add(_ key: String, _ value: Double) {
        append(key, DecimalText.fixed(value, places: 3))
    }

    mutating func add(_ key: String, _ value: Bool) {
        append(key, value ? "true" : "false")
    }

    /// A nested object of name to count, names sorted.
    mutating func add(_ key: String, counts: [String: Int]) {
        let body = counts.sorted { $0.key < $1.key }.map { "\(Escaping.json($0.key)):\($0.value)" }
        append(key, "{" + body.joined(separator: ",") + "}")
    }

    /// An array of strings.
    mutating func add(_ key: String, strings: [String]) {
        append(key, "[" + strings.map { Escaping.json($0) }.joined(separator: ",") + "]")
    }

    /// A nested object of a row's columns, in the row's order: text values as JSON strings,
    /// JSON values (from JSON Lines input, already checked) as they came.
    mutating func add(_ key: String, fields: RowFields) {
        var body: [String] = []
        body.reserveCapacity(fields.names.count)
        for (name, value) in zip(fields.names, fields.values) {
            switch value {
            case .text(let text): body.append(Escaping.json(name) + ":" + Escaping.json(text))
            case .json(let raw): body.append(Escaping.json(name) + ":" + Escaping.jsonValue(raw))
            }
        }
        append(key, "{" + body.joined(separator: ",") + "}")
    }

    /// An array of objects.
    mutating func add(_ key: String, objects: [JSONLine]) {
        append(key, "[" + objects.map(\.object).joined(separator: ",") + "]")
    }

    /// The object, without a newline.
    var object: String { "{" + members.joined(separator: ",") + "}" }

    /// The object on one line, with its newline.
    var text: String { object + "\n" }

    private mutating func append(_ key: String, _ rendered: String) {
        members.append(Escaping.json(key) + ":" + rendered)
    }
}
