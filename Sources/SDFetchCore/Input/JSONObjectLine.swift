/// Reads one JSON Lines record: the members of a JSON object (RFC 8259), each value
/// checked and kept for the row's `fields`: strings decoded, anything else as its text.
///
/// Hand-written rather than through `JSONDecoder`: a row's other members go into the
/// output as they came (a number's digits, nested objects, the members' order), which a
/// decoder into Swift values would not keep. Nesting is bounded (``maxDepth``), so a
/// hostile line cannot exhaust the stack.
struct JSONObjectLine {
    struct Member {
        let name: String
        let value: RowFields.Value
    }

    /// Deeper arrays and objects are refused.
    static let maxDepth = 64

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// The members of the object on `line`, in order (a repeated name keeps its last
    /// value, as JavaScript's `JSON.parse` does), or why the line is not one object.
    static func members(of line: ArraySlice<UInt8>) -> Result<[Member], RowProblem> {
        var reader = JSONObjectLine(bytes: line, index: line.startIndex)
        return Result { () throws(RowProblem) in try reader.object() }
    }

    private init(bytes: ArraySlice<UInt8>, index: Int) {
        self.bytes = bytes
        self.index = index
    }

    private mutating func object() throws(RowProblem) -> [Member] {
        skipBlanks()
        guard peek == UInt8(ascii: "{") else { throw RowProblem("not a JSON object") }
        index += 1
        var members: [Member] = []
        skipBlanks()
        if peek == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipBlanks()
                guard peek == UInt8(ascii: "\"") else { throw RowProblem("expected a member name in quotes") }
                let name = try string()
                skipBlanks()
                guard peek == UInt8(ascii: ":") else { throw RowProblem("expected ':' after a member name") }
                index += 1
                skipBlanks()
                let value: RowFields.Value
                if peek == UInt8(ascii: "\"") {
                    value = .text(try string())
                } else {
                    let start = index
                    try skipValue(depth: 1)
                    value = .json(String(decoding: bytes[start..<index], as: UTF8.self))
                }
                guard members.count < DelimitedRecordParser.maxFields else {
                    throw RowProblem("more than \(DelimitedRecordParser.maxFields) members")
                }
                members.append(Member(name: name, value: value))
                skipBlanks()
                if peek == UInt8(ascii: ",") {
                    index += 1
                } else if peek == UInt8(ascii: "}") {
                    index += 1
                    break
                } else {
                    throw RowProblem("expected ',' or '}' in the object")
                }
            }
        }
        skipBlanks()
        guard index == bytes.endIndex else { throw RowProblem("text after the object") }
        return Self.lastOfEachName(members)
    }

    /// Each name once, at the place of its last value; linear, where removing an earlier
    /// member on every repeat was quadratic in a line of thousands of members.
    private static func lastOfEachName(_ members: [Member]) -> [Member] {
        var seen = Set<String>()
        seen.reserveCapacity(members.count)
        var kept: [Member] = []
        for member in members.reversed() where seen.insert(member.name).inserted { kept.append(member) }
        guard kept.count < members.count else { return members }
        return kept.reversed()
    }

    private var peek: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    private mutating func skipBlanks() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A { index += 1 }
    }

    /// A string at `index` (on its opening quote), decoded.
    private mutating func string() throws(RowProblem) -> String {
        index += 1
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw RowProblem("a string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0..<0x20:
                throw RowProblem("a control character inside a string")
            default:
                out.append(byte)
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(RowProblem) {
        guard let byte = peek else { throw RowProblem("a string is not closed") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar), bytes[index...].starts(with: Array("\\u".utf8)) {
                let save = index
                index += 2
                let low = try hex4()
                if (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = save
                }
            }
            // A lone surrogate is legal JSON but no character: the replacement character stands in.
            out.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
        default:
            throw RowProblem("an unknown escape in a string")
        }
    }

    private mutating func hex4() throws(RowProblem) -> UInt32 {
        guard bytes.endIndex - index >= 4 else { throw RowProblem("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Self.hexValue(bytes[index]) else {
                throw RowProblem("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Moves past one value, checking it.
    private mutating func skipValue(depth: Int) throws(RowProblem) {
        guard depth <= Self.maxDepth else { throw RowProblem("nested deeper than \(Self.maxDepth) levels") }
        skipBlanks()
        guard let byte = peek else { throw RowProblem("a value is missing") }
        switch byte {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipContainer(isObject: byte == UInt8(ascii: "{"), depth: depth)
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
        default:
            throw RowProblem("not a JSON value")
        }
    }

    private mutating func skipContainer(isObject: Bool, depth: Int) throws(RowProblem) {
        let close = UInt8(ascii: isObject ? "}" : "]")
        index += 1
        skipBlanks()
        if peek == close {
            index += 1
            return
        }
        while true {
            skipBlanks()
            if isObject {
                guard peek == UInt8(ascii: "\"") else { throw RowProblem("expected a member name in quotes") }
                _ = try string()
                skipBlanks()
                guard peek == UInt8(ascii: ":") else { throw RowProblem("expected ':' after a member name") }
                index += 1
            }
            try skipValue(depth: depth + 1)
            skipBlanks()
            if peek == UInt8(ascii: ",") {
                index += 1
            } else if peek == close {
                index += 1
                return
            } else {
                throw RowProblem("an array or object is not closed")
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(RowProblem) {
        let text = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes[index...].starts(with: text) else { throw RowProblem("not a JSON value") }
        index += text.count
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(RowProblem) {
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, Self.isDigit(first) else { throw RowProblem("a number without digits") }
        if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek, Self.isDigit(digit) else { throw RowProblem("a number without digits") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek, Self.isDigit(digit) else { throw RowProblem("a number without digits") }
            skipDigits()
        }
    }

    private mutating func skipDigits() {
        while let byte = peek, Self.isDigit(byte) { index += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
