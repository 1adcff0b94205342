/// Turns a tabular source (CSV, TSV, JSON Lines) into rows: its URL, its pin and its other
/// columns (``RowFields``), or why the row is unusable (<doc:Fetching#Input>).
///
/// CSV and TSV start with a header row naming the columns; every later record must have
/// as many fields. A header without the URL column makes the whole source unreadable
/// (reported once; its rows are not read), as does one without a `--sha256-column` that
/// was asked for by name. JSON Lines have no header: each object names its own members.
/// A bad row is an ``InputLine`` with a ``InputLine/problem``: it ends `invalid` with its
/// `FILE:LINE`, and the run goes on.
struct RowSplitter {
    let source: String
    private let format: InputFormat
    private let options: InputOptions
    private var parser: DelimitedRecordParser
    private var header: Header?
    /// The source cannot be read as a table (its header); nothing more is read from it.
    private(set) var failure: String?

    /// What the header row says about each record (CSV and TSV).
    private struct Header {
        let width: Int
        let urlIndex: Int
        let pinIndex: Int?
        /// The names of the columns that go into `fields`, and where each is in a record.
        let fieldNames: [String]
        let fieldIndices: [Int]
    }

    init(source: String, format: InputFormat, options: InputOptions) {
        precondition(format.isTabular, "plain lists go through LineSplitter")
        self.source = source
        self.format = format
        self.options = options
        parser = DelimitedRecordParser(Self.layout(of: format))
    }

    static func layout(of format: InputFormat) -> DelimitedRecordParser.Layout {
        switch format {
        case .csv: .csv
        case .tsv: .tsv
        case .jsonl, .lines: .line
        }
    }

    /// Feeds a chunk; complete rows are appended to `out`.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, into out: inout [InputItem]) {
        guard failure == nil else { return }
        var parser = takeParser()
        parser.feed(chunk) { record in take(record, into: &out) }
        self.parser = parser
    }

    /// Flushes a last row without a final newline.
    mutating func finish(into out: inout [InputItem]) {
        guard failure == nil else { return }
        var parser = takeParser()
        parser.finish { record in take(record, into: &out) }
        self.parser = parser
    }

    /// The parser, moved out (`take` needs `self` while the parser runs): a copy left in
    /// place would share the record being built, and every chunk would then copy it whole.
    private mutating func takeParser() -> DelimitedRecordParser {
        let parser = self.parser
        self.parser = DelimitedRecordParser(.line, keepsBytes: false)
        return parser
    }

    // MARK: - Records to rows

    private mutating func take(_ record: DelimitedRecordParser.Record, into out: inout [InputItem]) {
        guard failure == nil else { return }
        if format == .jsonl {
            out.append(.line(jsonRow(record)))
        } else if let header {
            out.append(.line(row(record, header)))
        } else {
            switch Self.header(record, options: options) {
            case .success(let found): header = found
            case .failure(let problem):
                failure = problem.reason
                out.append(.unreadable(source: source, detail: problem.reason))
            }
        }
    }

    private static func header(
        _ record: DelimitedRecordParser.Record, options: InputOptions
    ) -> Result<Header, RowProblem> {
        if record.hasTooManyFields {
            return .failure(RowProblem("the header row has more than \(DelimitedRecordParser.maxFields) columns"))
        }
        var names: [String] = []
        var seen: [String: Int] = [:]
        for index in 0..<record.fieldCount {
            var name = String(String(decoding: record.field(index), as: UTF8.self).trimmingBlanks())
            if name.isEmpty { name = "column\(index + 1)" }
            // A repeated name gets a suffix, as pandas does (`name.1`), so `fields` keeps both.
            if let count = seen[name] {
                seen[name] = count + 1
                name += ".\(count)"
            } else {
                seen[name] = 1
            }
            names.append(name)
        }
        let listed = names.prefix(8).joined(separator: ", ") + (names.count > 8 ? ", ..." : "")
        guard let urlIndex = names.firstIndex(of: options.urlColumn) else {
            return .failure(RowProblem("no column named '\(options.urlColumn)' in the header row (columns: \(listed))"))
        }
        let pinIndex = names.firstIndex(of: options.sha256Column)
        if pinIndex == nil && options.requiresSHA256Column {
            return .failure(
                RowProblem("no column named '\(options.sha256Column)' in the header row (columns: \(listed))"))
        }
        let fieldIndices = names.indices.filter { $0 != urlIndex }
        return .success(
            Header(
                width: names.count, urlIndex: urlIndex, pinIndex: pinIndex, fieldNames: fieldIndices.map { names[$0] },
                fieldIndices: fieldIndices))
    }

    private func row(_ record: DelimitedRecordParser.Record, _ header: Header) -> InputLine {
        let urlCell = record.fieldCount > header.urlIndex ? record.field(header.urlIndex) : []
        if let problem = Self.recordProblem(record) { return bad(record, urlCell, problem) }
        guard record.fieldCount == header.width else {
            return bad(record, urlCell, "\(record.fieldCount) fields where the header has \(header.width)")
        }
        var pin: String?
        if let pinIndex = header.pinIndex {
            switch Self.pin(record.field(pinIndex)) {
            case .success(let found): pin = found
            case .failure(let problem): return bad(record, urlCell, problem.reason)
            }
        }
        let values = header.fieldIndices.map { RowFields.Value.text(String(decoding: record.field($0), as: UTF8.self)) }
        return line(record, urlCell, fields: RowFields(names: header.fieldNames, values: values), pin: pin)
    }

    private func jsonRow(_ record: DelimitedRecordParser.Record) -> InputLine {
        let text = record.field(0)
        if let problem = Self.recordProblem(record) { return bad(record, text, problem) }
        let members: [JSONObjectLine.Member]
        switch JSONObjectLine.members(of: text) {
        case .success(let found): members = found
        case .failure(let error): return bad(record, text, "not a JSON object: \(error.reason)")
        }
        var url: String?
        var pin: String?
        var names: [String] = []
        var values: [RowFields.Value] = []
        for member in members {
            if member.name == options.urlColumn {
                guard case .text(let value) = member.value else {
                    return bad(record, text, "the '\(options.urlColumn)' member is not a string")
                }
                url = value
                continue
            }
            if member.name == options.sha256Column {
                guard case .text(let value) = member.value else {
                    return bad(record, text, "the '\(options.sha256Column)' member is not a string")
                }
                switch Self.pin(Array(value.utf8)[...]) {
                case .success(let found): pin = found
                case .failure(let problem): return bad(record, text, problem.reason)
                }
            }
            names.append(member.name)
            values.append(member.value)
        }
        guard let url else { return bad(record, text, "no '\(options.urlColumn)' member") }
        return line(record, Array(url.utf8)[...], fields: RowFields(names: names, values: values), pin: pin)
    }

    private static func recordProblem(_ record: DelimitedRecordParser.Record) -> String? {
        if record.isOverlong { return "row longer than \(DelimitedRecordParser.maxRecordBytes >> 10) KiB" }
        if record.hasTooManyFields { return "row with more than \(DelimitedRecordParser.maxFields) fields" }
        if record.isUnterminated { return "a quoted field is not closed before the end of the input" }
        return nil
    }

    /// A pin cell: blank is no pin; else 64 hex digits, lower-cased.
    private static func pin(_ cell: ArraySlice<UInt8>) -> Result<String?, RowProblem> {
        let text = String(String(decoding: cell, as: UTF8.self).trimmingBlanks())
        guard !text.isEmpty else { return .success(nil) }
        guard text.utf8.count == 64, text.utf8.allSatisfy({ JSONObjectLine.hexValue($0) != nil }) else {
            return .failure(RowProblem("the sha256 '\(text.prefix(80))' is not 64 hex digits"))
        }
        return .success(text.lowercased())
    }

    private func line(
        _ record: DelimitedRecordParser.Record, _ urlCell: ArraySlice<UInt8>, fields: RowFields, pin: String?
    ) -> InputLine {
        let (text, isOverlong) = Self.urlText(urlCell)
        return InputLine(
            source: source, number: record.line, text: text, isOverlong: isOverlong, fields: fields, pin: pin)
    }

    private func bad(_ record: DelimitedRecordParser.Record, _ cell: ArraySlice<UInt8>, _ problem: String) -> InputLine
    {
        InputLine(
            source: source, number: record.line, text: Self.urlText(cell).text, isOverlong: false, problem: problem)
    }

    /// The URL cell trimmed, cut past ``URLKey/maxLength`` like a plain line.
    private static func urlText(_ cell: ArraySlice<UInt8>) -> (text: String, isOverlong: Bool) {
        var slice = cell
        while let first = slice.first, first == 0x20 || first == 0x09 || first == 0x0D || first == 0x0A {
            slice = slice.dropFirst()
        }
        while let last = slice.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A {
            slice = slice.dropLast()
        }
        let isOverlong = slice.count > URLKey.maxLength
        return (LineSplitter.text(of: Array(slice.prefix(URLKey.maxLength + 1))), isOverlong)
    }
}
