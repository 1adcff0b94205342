import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@Suite("Tabular URL lists", .cleansUp)
struct TabularInputTests {
    let directory = TemporaryDirectory("table")

    /// Reads `sources` to the end; `awaitingTotal`: then waits for their count, which for a
    /// table runs beside the read and may come after the last row.
    private func read(
        _ sources: [InputSource], _ options: InputOptions = InputOptions(), awaitingTotal: Bool = false
    ) async -> (
        rows: [InputLine], unreadable: [String], expected: Int?
    ) {
        let reader = URLListReader(sources: sources, options: options)
        var rows: [InputLine] = []
        var unreadable: [String] = []
        var expected: Int?
        while let batch = await reader.next() {
            expected = expected ?? reader.expectedLines
            for item in batch {
                switch item {
                case .line(let line): rows.append(line)
                case .unreadable(_, let detail): unreadable.append(detail)
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while awaitingTotal, expected == nil, reader.expectedLines == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return (rows, unreadable, expected ?? reader.expectedLines)
    }

    private func texts(_ fields: RowFields?) -> [String: String] {
        guard let fields else { return [:] }
        var out: [String: String] = [:]
        for (name, value) in zip(fields.names, fields.values) {
            switch value {
            case .text(let text): out[name] = "text:" + text
            case .json(let raw): out[name] = "json:" + raw
            }
        }
        return out
    }

    @Test("reads a catalogue CSV: BOM, CRLF, quoted commas, quotes and newlines, rows counted, not lines")
    func catalogueCSV() async {
        let csv =
            "\u{FEFF}sku,url,caption\r\n"
            + "A1,http://h/a.png,\"red, \"\"large\"\"\r\nsecond line\"\r\n"
            + "\r\n"
            + "B2, http://h/b.png ,plain\r\n"
            + "C3,http://h/c.png,\"last, no newline\""
        let (rows, unreadable, expected) = await read(
            [.file(directory.write(csv, to: "catalogue.csv"))], awaitingTotal: true)
        #expect(unreadable.isEmpty)
        #expect(expected == 3)
        #expect(rows.map(\.text) == ["http://h/a.png", "http://h/b.png", "http://h/c.png"])
        #expect(rows.map(\.number) == [2, 5, 6])
        #expect(texts(rows[0].fields) == ["sku": "text:A1", "caption": "text:red, \"large\"\r\nsecond line"])
        #expect(rows[0].fields?.names == ["sku", "caption"])
        #expect(texts(rows[2].fields)["caption"] == "text:last, no newline")
        #expect(rows.allSatisfy { $0.problem == nil && $0.pin == nil })
    }

    @Test("a row with the wrong number of fields, a bad pin or an unclosed quote is a problem at its line")
    func badRows() async {
        let pin = String(repeating: "AB", count: 32)
        let csv = """
            url,sha256,caption
            http://h/1.png,\(pin),ok
            http://h/2.png,,too,many
            http://h/3.png,xyz,bad pin
            http://h/4.png,,"never closed
            http://h/5.png,,swallowed

            """
        let (rows, _, expected) = await read([.file(directory.write(csv, to: "bad.csv"))], awaitingTotal: true)
        #expect(expected == 4)
        #expect(rows.map(\.number) == [2, 3, 4, 5])
        #expect(rows[0].pin == pin.lowercased())
        #expect(rows[0].problem == nil)
        #expect(rows[1].problem == "4 fields where the header has 3")
        #expect(rows[2].problem?.contains("not 64 hex digits") == true)
        #expect(rows[3].problem == "a quoted field is not closed before the end of the input")
        #expect(rows[3].text == "http://h/4.png")
    }

    @Test("a gzipped TSV streams through zlib, its rows counted up front; quotes are plain text")
    func gzippedTSV() async throws {
        let tsv = "caption\turl\tlabel\n\"12\" vinyl\"\thttp://h/a.png\t1\nnone\thttp://h/b.png\t2\n"
        let plain = directory.write(tsv, to: "list.tsv")
        try Gzip.compress(plain, keep: true)
        let (rows, unreadable, expected) = await read([.file(plain + ".gz")], awaitingTotal: true)
        #expect(unreadable.isEmpty)
        #expect(expected == 2)
        #expect(rows.map(\.text) == ["http://h/a.png", "http://h/b.png"])
        #expect(texts(rows[0].fields) == ["caption": "text:\"12\" vinyl\"", "label": "text:1"])
    }

    @Test("a truncated gzip list keeps its rows read so far and reports the file")
    func truncatedGzip() async throws {
        let body = (0..<2000).map { "http://h/\($0).png" }.joined(separator: "\n")
        let plain = directory.write("url\n" + body + "\n", to: "cut.csv")
        try Gzip.compress(plain)
        let data = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))
        try data.prefix(data.count - 12).write(to: URL(fileURLWithPath: plain + ".gz"))
        let (rows, unreadable, _) = await read([.file(plain + ".gz")])
        #expect(unreadable == ["the gzip data ends early (a truncated file)"])
        #expect(rows.count > 100)
        #expect(rows.allSatisfy { $0.problem == nil })
    }

    @Test("a plain list gzipped and cut mid-line does not fetch its cut-off last line")
    func truncatedGzipDropsPartialLine() async throws {
        let body = (0..<5000).map { "http://h/\(10000 + $0).png" }.joined(separator: "\n")
        let plain = directory.write(body + "\n", to: "cut.txt")
        try Gzip.compress(plain)
        let data = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: plain + ".gz"))
        let (rows, unreadable, _) = await read([.file(plain + ".gz")])
        #expect(unreadable == ["the gzip data ends early (a truncated file)"])
        #expect(rows.count > 100)
        #expect(rows.allSatisfy { $0.text.count == "http://h/10000.png".count }, "\(rows.last?.text ?? "")")
    }

    @Test("JSON Lines: the url key, other members as they came, bad lines at their number")
    func jsonLines() async {
        let jsonl = """
            {"url": "http://h/a.png", "id": 7, "tags": ["x", "y"], "caption": "caf\\u00e9 \\"q\\""}
            {"id": 8}
            [1, 2]
            {"url": 5}

            {"url":"http://h/b.png","sha256":"\(String(repeating: "0", count: 64))","nested":{"a":[true,null,-1.5e3]}}
            """
        let (rows, _, expected) = await read([.file(directory.write(jsonl, to: "list.ndjson"))], awaitingTotal: true)
        #expect(expected == 5)
        #expect(rows.map(\.number) == [1, 2, 3, 4, 6])
        #expect(rows[0].text == "http://h/a.png")
        #expect(texts(rows[0].fields) == ["id": "json:7", "tags": "json:[\"x\", \"y\"]", "caption": "text:café \"q\""])
        #expect(rows[1].problem == "no 'url' member")
        #expect(rows[2].problem?.hasPrefix("not a JSON object") == true)
        #expect(rows[3].problem == "the 'url' member is not a string")
        #expect(rows[4].pin == String(repeating: "0", count: 64))
        #expect(texts(rows[4].fields)["nested"] == "json:{\"a\":[true,null,-1.5e3]}")
    }

    @Test("a header without the URL column makes the file unreadable; other columns by name")
    func columns() async {
        let file = directory.write("link,caption\nhttp://h/a.png,x\n", to: "named.csv")
        let missing = await read([.file(file)])
        #expect(missing.rows.isEmpty)
        #expect(missing.unreadable == ["no column named 'url' in the header row (columns: link, caption)"])
        var options = InputOptions()
        options.urlColumn = "link"
        let named = await read([.file(file)], options)
        #expect(named.rows.map(\.text) == ["http://h/a.png"])
        options.sha256Column = "digest"
        options.requiresSHA256Column = true
        let noPin = await read([.file(file)], options)
        #expect(noPin.unreadable == ["no column named 'digest' in the header row (columns: link, caption)"])
    }

    @Test("--input-format overrides the extension; a .txt.gz list is inflated lines")
    func formatOverride() async throws {
        let file = directory.write("url\nhttp://h/a.png\n", to: "list.txt")
        var options = InputOptions()
        options.format = .csv
        #expect(await read([.file(file)], options).rows.map(\.text) == ["http://h/a.png"])
        #expect(await read([.file(file)]).rows.map(\.text) == ["url", "http://h/a.png"])
        try Gzip.compress(file)
        let inflated = await read([.file(file + ".gz")], awaitingTotal: true)
        #expect(inflated.rows.map(\.text) == ["url", "http://h/a.png"])
        #expect(inflated.expected == 2)
    }

    @Test("an overlong row is cut, flagged and does not hide the next one")
    func overlongRow() async {
        let caption = String(repeating: "c", count: 100_000)
        let file = directory.write("url,caption\nhttp://h/a.png,\(caption)\nhttp://h/b.png,short\n", to: "long.csv")
        let rows = await read([.file(file)]).rows
        #expect(rows.map(\.text) == ["http://h/a.png", "http://h/b.png"])
        #expect(rows[0].problem == "row longer than 64 KiB")
        #expect(rows[1].problem == nil)
    }

    @Test("an overlong JSON line is flagged, not a crash, and does not hide the next one")
    func overlongJSONLine() async {
        let caption = String(repeating: "c", count: 100_000)
        let text = "{\"url\":\"http://h/a.png\",\"caption\":\"\(caption)\"}\n{\"url\":\"http://h/b.png\"}\n"
        let rows = await read([.file(directory.write(text, to: "long.jsonl"))]).rows
        #expect(rows.count == 2)
        #expect(rows.first?.problem == "row longer than 64 KiB")
        #expect(rows.last?.text == "http://h/b.png" && rows.last?.problem == nil)
    }

    @Test("a row of bare delimiters is capped at 4096 fields, CSV and TSV, and the next row is read")
    func rowOfDelimiters() async throws {
        for (name, delimiter) in [("commas.csv", ","), ("tabs.tsv", "\t")] {
            let row = "http://h/a.png" + String(repeating: delimiter, count: 200_000)
            let file = directory.write("url\(delimiter)caption\n\(row)\nhttp://h/b.png\(delimiter)x\n", to: name)
            try Gzip.compress(file)
            let (rows, unreadable, expected) = await read([.file(file + ".gz")], awaitingTotal: true)
            #expect(unreadable.isEmpty)
            #expect(expected == 2)
            #expect(rows.map(\.text) == ["http://h/a.png", "http://h/b.png"])
            #expect(rows.map(\.problem) == ["row with more than 4096 fields", nil])
        }
    }

    @Test("a header wider than 4096 columns makes the table unreadable")
    func wideHeader() async {
        let header = "url" + (1...5000).map { ",c\($0)" }.joined()
        let (rows, unreadable, _) = await read([.file(directory.write(header + "\nhttp://h/a.png\n", to: "wide.csv"))])
        #expect(rows.isEmpty)
        #expect(unreadable == ["the header row has more than 4096 columns"])
    }

    @Test("a JSON line of more than 4096 members is a problem; a repeated name keeps its last value, last")
    func jsonMembers() async {
        let many = "{\"url\":\"http://h/a.png\"" + (0..<5000).map { ",\"m\($0)\":\($0)" }.joined() + "}"
        let repeated = #"{"a":1,"url":"http://h/b.png","b":2,"a":3}"#
        let (rows, _, _) = await read([.file(directory.write(many + "\n" + repeated + "\n", to: "many.jsonl"))])
        #expect(rows.map(\.problem) == ["not a JSON object: more than 4096 members", nil])
        #expect(rows[1].fields?.names == ["b", "a"])
        #expect(texts(rows[1].fields) == ["b": "json:2", "a": "json:3"])
    }
}
