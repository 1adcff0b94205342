/// Decides whether text is an SVG document: its root element must be `<svg`.
///
/// <doc:Verification#Format-sniffing>: an optional UTF-8 byte order mark, whitespace,
/// the XML prolog and other processing instructions, comments and a doctype may come
/// first; then the first element must be `svg`. An HTML page that embeds `<svg>` further
/// down has `html` as its first element and is therefore `not-an-image`. Only the first
/// ``window`` bytes are looked at, so a megabyte of comments cannot make sniffing slow.
enum SVGSniffer {
    /// How many leading bytes may hold the prolog before the root element.
    static let window = 8192

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The offset of the `<svg` root start tag, or nil when the text is not SVG.
    static func rootElement(in bytes: [UInt8]) -> Int? {
        let text = bytes.prefix(window)
        var index = text.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        while true {
            while index < text.count, isWhitespace(text[index]) { index += 1 }
            if hasPrefix("<svg", in: text, at: index) {
                let next = index + 4
                guard next < text.count else { return nil }
                return isWhitespace(text[next]) || text[next] == UInt8(ascii: ">") || text[next] == UInt8(ascii: "/")
                    ? index : nil
            } else if hasPrefix("<?", in: text, at: index) {
                guard let end = find("?>", in: text, from: index + 2) else { return nil }
                index = end + 2
            } else if hasPrefix("<!--", in: text, at: index) {
                guard let end = find("-->", in: text, from: index + 4) else { return nil }
                index = end + 3
            } else if hasPrefix("<!DOCTYPE", in: text, at: index) {
                guard let end = endOfDoctype(in: text, from: index + 9) else { return nil }
                index = end + 1
            } else {
                return nil
            }
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The `>` closing a doctype, skipping an internal subset in `[...]` and quoted literals.
    private static func endOfDoctype(in text: ArraySlice<UInt8>, from start: Int) -> Int? {
        var inSubset = false
        var quote: UInt8?
        for index in start..<text.endIndex {
            let byte = text[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">"), !inSubset {
                return index
            }
        }
        return nil
    }

    private static func hasPrefix(_ ascii: String, in text: ArraySlice<UInt8>, at index: Int) -> Bool {
        let expected = Array(ascii.utf8)
        guard index <= text.endIndex - expected.count else { return false }
        return text[index..<index + expected.count].elementsEqual(expected)
    }

    private static func find(_ ascii: String, in text: ArraySlice<UInt8>, from start: Int) -> Int? {
        let expected = Array(ascii.utf8)
        guard start <= text.endIndex - expected.count else { return nil }
        return (start...(text.endIndex - expected.count)).first {
            text[$0..<$0 + expected.count].elementsEqual(expected)
        }
    }
}
