import SDFetchCore

/// The one place that decides which characters may not reach a terminal raw, and the door
/// every printed text goes through: both renderings first mask passwords with
/// ``Redaction/masked(_:)`` (README "Security"), so no printer can forget it.
///
/// Text from the network or the input (URLs, invalid lines, server-supplied details) can
/// hold ESC, CSI (U+009B) or bidi overrides that would rewrite the user's screen, or
/// invisible characters that make two different URLs print alike. Every printer goes
/// through ``isUnsafe(_:)``: text output writes such characters as visible escapes, JSON as
/// `\uXXXX` (valid JSON that decodes to the exact original text).
enum Escaping {
    /// C0 controls, DEL, C1 controls, line and paragraph separators, and every character a
    /// terminal may draw as nothing or use to reorder text, by Unicode's own properties
    /// rather than a list that a new Unicode version outdates: every format character
    /// (general category Cf: bidi controls, zero-width spaces and joiners, the BOM, tag
    /// characters that can spell hidden ASCII) and every Default_Ignorable_Code_Point
    /// (variation selectors, the soft hyphen, Hangul fillers). U+2800, the blank Braille
    /// pattern, is neither, yet prints as a space that is none.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20...0x7E: false
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x2800: true
        default:
            scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.generalCategory == .format
        }
    }

    /// Text for a terminal line: `\t \n \r` spelled so, other unsafe characters as `\xHH` or `\u{HHHH}`.
    ///
    /// Backslashes stay as they are, so an ordinary URL prints byte for byte (URLs with
    /// control characters are `invalid` anyway, so the URL column of a result never changes).
    static func terminal(_ text: some StringProtocol) -> String {
        let text = Redaction.masked(String(text))
        guard !isPrintableASCII(text), text.unicodeScalars.contains(where: isUnsafe) else { return String(text) }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                out.append(scalar)
                continue
            }
            let escaped: String
            switch scalar {
            case "\t": escaped = "\\t"
            case "\n": escaped = "\\n"
            case "\r": escaped = "\\r"
            default:
                escaped =
                    scalar.value < 0x80
                    ? "\\x" + hex(scalar.value, digits: 2) : "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
            out.append(contentsOf: escaped.unicodeScalars)
        }
        return String(out)
    }

    /// Printable ASCII only: nothing to escape, told from the bytes without decoding scalars
    /// (every result line of a warm run asks this of its URL and path).
    static func isPrintableASCII(_ text: some StringProtocol) -> Bool {
        text.withUTF8Bytes { bytes in bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
    }

    /// A JSON string literal, quotes included: `"`, `\` and every unsafe character escaped.
    static func json(_ text: some StringProtocol) -> String {
        let text = Redaction.masked(String(text))
        // Most text (URLs, paths, captions) needs no escape: copied whole, not scalar by scalar.
        let isPlain = text.withUTF8Bytes { bytes in
            bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        }
        if isPlain { return "\"" + text + "\"" }
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case _ where isUnsafe(scalar): out.append(contentsOf: jsonEscape(scalar).unicodeScalars)
            default: out.append(scalar)
            }
        }
        out.append("\"")
        return String(out)
    }

    /// A JSON value that is already valid JSON (a JSON Lines member), made as safe as
    /// ``json(_:)`` makes strings: a tab or CR can only be a blank between tokens there and
    /// becomes a space; any other unsafe character can only be inside a string and becomes
    /// `\uXXXX`, which decodes to the same text.
    static func jsonValue(_ raw: String) -> String {
        guard raw.unicodeScalars.contains(where: isUnsafe) else { return raw }
        var out = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            switch scalar {
            case "\t", "\r": out.append(" ")
            case _ where isUnsafe(scalar): out.append(contentsOf: jsonEscape(scalar).unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// `\uXXXX`, or a surrogate pair's two for a scalar past U+FFFF (a tag character).
    private static func jsonEscape(_ scalar: Unicode.Scalar) -> String {
        guard scalar.value > 0xFFFF else { return "\\u" + hex(scalar.value, digits: 4) }
        let offset = scalar.value - 0x10000
        return "\\u" + hex(0xD800 + (offset >> 10), digits: 4) + "\\u" + hex(0xDC00 + (offset & 0x3FF), digits: 4)
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
