import SDFetchCore

/// Formats one result for standard output (text or JSON Lines) and for standard error.
///
/// Every string from the input or the network goes through ``Escaping``, and every URL
/// (which masks passwords first), so a password in userinfo is never printed.
enum ResultPrinter {
    /// `STATUS<TAB>PATH<TAB>URL`, or one JSON object; `path` is the `-o` file or the cache file.
    static func line(_ result: FetchResult, path: String?, json: Bool) -> String {
        json ? jsonLine(result, path: path) : textLine(result, path: path)
    }

    static func textLine(_ result: FetchResult, path: String?) -> String {
        row(statusWord(result), path.map { Escaping.terminal($0) } ?? "-", Escaping.terminal(result.url))
    }

    /// `a TAB b TAB c LF`, copied once into a string of its exact size (a warm run prints
    /// 100,000 of these a second; interpolation appended piece by piece).
    private static func row(_ a: String, _ b: String, _ c: String) -> String {
        a.withUTF8Bytes { a in
            b.withUTF8Bytes { b in
                c.withUTF8Bytes { c in
                    String(unsafeUninitializedCapacity: a.count + b.count + c.count + 3) { out in
                        var end = 0
                        for (field, separator) in [
                            (a, UInt8(ascii: "\t")), (b, UInt8(ascii: "\t")), (c, UInt8(ascii: "\n")),
                        ] {
                            _ = UnsafeMutableBufferPointer(rebasing: out[end...]).initialize(from: field)
                            out[end + field.count] = separator
                            end += field.count + 1
                        }
                        return end
                    }
                }
            }
        }
    }

    /// The status column: `interrupted` for a URL Ctrl-C stopped, so a re-run's input is easy to pick out.
    static func statusWord(_ result: FetchResult) -> String {
        result.failure?.kind == .interrupted ? "interrupted" : result.status.rawValue
    }

    static func jsonLine(_ result: FetchResult, path: String?) -> String {
        var object = JSONLine()
        object.add("url", result.url)
        object.add("key", result.key?.redacted)
        object.add("status", result.status.rawValue)
        object.add("path", path)
        object.add("format", result.format?.name)
        object.add("bytes", result.bytes)
        object.add("width", result.width)
        object.add("height", result.height)
        object.add("sha256", result.sha256)
        object.add("http_status", result.httpStatus)
        object.add("error", result.failure?.kind.label)
        object.add("error_detail", result.failure?.detail)
        object.add("host_cause", result.failure?.hostCause?.label)
        object.add("duplicates", result.duplicates)
        object.add("ms", Int64(result.duration.timeInterval * 1000))
        // The remote cache that answered a `cached` result, null for the rest.
        object.add("remote", result.remote)
        return object.text.dropLast(2) + rowTail(source: result.source, fields: result.fields)
    }

    /// The members a tabular row brings to its line, last (``withRowTail(_:_:)`` swaps them;
    /// ``HeldJSONLines`` patches the first `,"duplicates":`, which must be the result's own):
    /// `,"source":...,"fields":{...}}` and the newline.
    static func rowTail(source: String?, fields: RowFields?) -> String {
        var object = JSONLine()
        object.add("source", source)
        if let fields { object.add("fields", fields: fields) }
        return "," + object.text.dropFirst()
    }

    /// `line` (a ``jsonLine(_:path:)``) with another row's tail: the line of a row that
    /// repeats the key of the row `line` answers. Safe as a text cut: inside a JSON string
    /// every `"` is escaped, so the first `,"source":` is the member itself.
    static func withRowTail(_ line: String, _ tail: String) -> String {
        rowHead(line) + tail
    }

    /// `line` up to its row's members (``rowTail(source:fields:)``): what every row of one
    /// key shares.
    static func rowHead(_ line: String) -> Substring {
        guard let start = UTF8Search.firstOffset(of: ",\"source\":", in: line) else { return Substring(line) }
        return line[..<UTF8Search.index(start, in: line)]
    }

    /// `sdfetch: failed: URL: REASON`, `sdfetch: skipped: ...`, `sdfetch: invalid: FILE:LINE: REASON`, or nil.
    static func problem(_ result: FetchResult, terminal: Terminal) -> String? {
        guard !result.status.isSuccess else { return nil }
        let why = result.failure.map { reason(of: $0) } ?? result.status.rawValue
        let word = terminal.paint(result.status.rawValue, .red)
        if result.status == .invalid {
            let place = result.source ?? "-"
            return "sdfetch: \(word): \(Escaping.terminal(place)): \(Escaping.terminal(why))\n"
        }
        return "sdfetch: \(word): \(Escaping.terminal(result.url)): \(Escaping.terminal(why))\(optOutHint(result))\n"
    }

    /// Publisher opt-outs are honoured by default (README, "Publisher opt-outs"): the line
    /// names the options that override them, since the URL is then skipped for `--max-age`.
    private static func optOutHint(_ result: FetchResult) -> String {
        guard result.failure?.kind == .optedOut else { return "" }
        return result.status == .skipped
            ? " (fetch it anyway: --ignore-opt-outs --retry-failed)" : " (store it anyway: --ignore-opt-outs)"
    }

    /// `http-404: not found`, or just the kind when the detail adds nothing.
    static func reason(of failure: FetchFailure) -> String {
        // An invalid line's or row's detail says it all; `--json` has the kind.
        let isInvalid = failure.kind == .invalidURL || failure.kind == .invalidRow
        if isInvalid || failure.detail.isEmpty || failure.detail == failure.kind.label {
            return isInvalid && !failure.detail.isEmpty ? failure.detail : failure.kind.label
        }
        return "\(failure.kind.label): \(failure.detail)"
    }
}
