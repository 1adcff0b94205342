/// Reads an SVG document's size from its root `<svg>` start tag, where simply declared.
///
/// SVG is vector art with no inherent pixel size; `width`/`height` in plain numbers or
/// `px`, else the `viewBox` width and height, are what a renderer would use by default.
/// Anything else (percentages, `em`, `cm`, no attributes) leaves the size unknown, which
/// is not an error. Sizes are rounded up to whole pixels.
enum SVGHeader {
    /// How far past `<svg` the start tag may run before we give up looking for its end.
    private static let maximumTagLength = 4096

    static func size(_ bytes: [UInt8]) -> PixelSize? {
        guard let start = SVGSniffer.rootElement(in: bytes) else { return nil }
        let attributes = attributes(in: bytes[(start + 4)..<min(bytes.count, start + maximumTagLength)])
        if let width = attributes["width"].flatMap(length), let height = attributes["height"].flatMap(length) {
            return PixelSize(width: width, height: height)
        }
        if let viewBox = attributes["viewBox"] {
            let numbers = viewBox.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
            guard numbers.count == 4, let width = pixels(numbers[2]), let height = pixels(numbers[3]) else {
                return nil
            }
            return PixelSize(width: width, height: height)
        }
        return nil
    }

    /// A plain number or one in `px`, as whole pixels.
    private static func length(_ text: String) -> Int? {
        let trimmed = text.hasSuffix("px") ? text.dropLast(2) : Substring(text)
        return pixels(trimmed)
    }

    private static func pixels(_ text: Substring) -> Int? {
        guard let value = Double(text), value.isFinite, value > 0 else { return nil }
        // Beyond 1e15 the value only needs to stay over any pixel limit without trapping.
        return Int(min(value, 1e15).rounded(.up))
    }

    /// `name="value"` and `name='value'` pairs up to the `>` that ends the tag.
    private static func attributes(in tag: ArraySlice<UInt8>) -> [String: String] {
        var result: [String: String] = [:]
        var index = tag.startIndex
        func skipWhitespace() {
            while index < tag.endIndex, SVGSniffer.isWhitespace(tag[index]) { index += 1 }
        }
        while true {
            skipWhitespace()
            guard index < tag.endIndex, tag[index] != UInt8(ascii: ">"), tag[index] != UInt8(ascii: "/") else {
                return result
            }
            let nameStart = index
            while index < tag.endIndex, tag[index] != UInt8(ascii: "="), tag[index] != UInt8(ascii: ">"),
                !SVGSniffer.isWhitespace(tag[index])
            {
                index += 1
            }
            let name = String(decoding: tag[nameStart..<index], as: UTF8.self)
            skipWhitespace()
            guard index < tag.endIndex, tag[index] == UInt8(ascii: "=") else { return result }
            index += 1
            skipWhitespace()
            guard index < tag.endIndex, tag[index] == UInt8(ascii: "\"") || tag[index] == UInt8(ascii: "'") else {
                return result
            }
            let quote = tag[index]
            index += 1
            let valueStart = index
            while index < tag.endIndex, tag[index] != quote { index += 1 }
            guard index < tag.endIndex else { return result }
            result[name] = String(decoding: tag[valueStart..<index], as: UTF8.self)
            index += 1
        }
    }
}
