/// Splits a byte stream into trimmed, meaningful lines (<doc:Fetching#Input>).
///
/// Tolerates CRLF, a UTF-8 BOM and surrounding whitespace; drops blank lines and lines
/// whose first non-blank character is `#`. Memory stays bounded on a line without end:
/// past ``URLKey/maxLength`` bytes the rest of the line is skipped and the line flagged.
struct LineSplitter {
    let source: String
    private var partial: [UInt8] = []
    private var lineNumber = 0
    private var isOverlong = false
    private var atStart = true

    init(source: String) {
        self.source = source
    }

    /// Feeds a chunk; complete lines are appended to `out`.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, into out: inout [InputItem]) {
        var start = 0
        var bytes = chunk[...]
        if atStart {
            atStart = false
            if chunk.starts(with: [0xEF, 0xBB, 0xBF]) {
                start = 3
                bytes = chunk[3...]
            }
        }
        while let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            append(chunk[start..<newline])
            lineNumber += 1
            emit(into: &out)
            start = newline + 1
            bytes = chunk[start...]
        }
        append(chunk[start...])
    }

    /// Flushes a last line without a final newline.
    mutating func finish(into out: inout [InputItem]) {
        guard !partial.isEmpty || isOverlong else { return }
        lineNumber += 1
        emit(into: &out)
    }

    private mutating func append(_ bytes: Slice<UnsafeRawBufferPointer>) {
        guard !isOverlong else { return }
        // Leading whitespace never counts towards the limit.
        var slice = bytes[...]
        if partial.isEmpty {
            while let first = slice.first, first == 0x20 || first == 0x09 || first == 0x0D { slice = slice.dropFirst() }
        }
        partial.append(contentsOf: slice)
        let limit = URLKey.maxLength + 64
        if partial.count > limit {
            trimTrailingWhitespace()
            if partial.count > limit {
                partial.removeSubrange((URLKey.maxLength + 1)...)
                isOverlong = true
            }
        }
    }

    private mutating func trimTrailingWhitespace() {
        while let last = partial.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A {
            partial.removeLast()
        }
    }

    private mutating func emit(into out: inout [InputItem]) {
        defer {
            partial.removeAll(keepingCapacity: true)
            isOverlong = false
        }
        trimTrailingWhitespace()
        guard !partial.isEmpty, partial.first != UInt8(ascii: "#") else { return }
        let text = Self.text(of: partial)
        out.append(
            .line(
                InputLine(
                    source: source, number: lineNumber, text: text,
                    isOverlong: isOverlong || partial.count > URLKey.maxLength)))
    }

    /// One element of an in-memory list (``InputSource/list(name:_:)``) as the line it
    /// would be in a file, or nil for a blank or `#` element. A newline inside stays inside
    /// (the URL is then `invalid`): an element is one URL, never several.
    static func line(_ element: String, source: String, number: Int) -> InputItem? {
        let blanks: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        var bytes = Array(element.utf8)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        while let first = bytes.first, blanks.contains(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, blanks.contains(last) { bytes = bytes.dropLast() }
        guard let first = bytes.first, first != UInt8(ascii: "#") else { return nil }
        let isOverlong = bytes.count > URLKey.maxLength
        let text = Self.text(of: Array(bytes.prefix(URLKey.maxLength + 1)))
        return .line(InputLine(source: source, number: number, text: text, isOverlong: isOverlong))
    }

    /// The line as text. Bytes that are not UTF-8 are written `%HH` instead of collapsing into
    /// U+FFFD, so `?a=\xff` and `?a=\xfe` stay two keys and the server still receives the byte
    /// (percent-encoding is how a URL carries it; <doc:Fetching#URL-identity> keeps bytes
    /// apart).
    static func text(of bytes: [UInt8]) -> String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        let hex = Array("0123456789ABCDEF".utf8)
        var position = 0
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                out.append(contentsOf: encoded)
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<position + length] {
                    out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                }
                position += length
            case .emptyInput:
                break loop
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
