/// The one function that masks passwords in text about to be printed, reported or stored.
///
/// <doc:Security>: a password in userinfo (`user:secret@host`) never appears in clear;
/// it is written `user:***@host`. The CLI's escaping functions (terminal and JSON), usage
/// errors, failure details and `-v` notes all pass through ``masked(_:)``, so a message
/// added later cannot forget it.
///
/// It reads free text, not only valid URLs: curl's error messages quote a proxy URL
/// (`unsupported proxy syntax in 'foo://user:secret@host:9'`), and an `invalid` input line
/// can be any mangled spelling (`https:/a:s@h/x`, `//a:s@h/x`, `http://a:p/s@h/x`, `#` or
/// `?` inside the password). The text is cut into words at blanks and quotes; in each word,
/// an authority starts at the word's start, after `://`, after a leading `//`, or after a
/// scheme's `:/`. Within an authority, a `:` followed by anything but a port, and then an
/// `@`, marks a password. A valid URL's path or query (`?mail=a@b`, `h:8080/x@y`) is
/// left alone: it has no `:` before its first `/` other than a port's.
public enum Redaction {
    /// What a masked password is written as.
    public static let mask = "***"

    /// `text` with every password-looking userinfo written ``mask``; unchanged when there is
    /// none (the common case returns the same string after one byte scan for `@`).
    public static func masked(_ text: String) -> String {
        guard text.withUTF8Bytes({ $0.contains(atSign) }) else { return text }
        let bytes = Array(text.utf8)
        var hidden: [Range<Int>] = []
        var wordStart = 0
        while wordStart < bytes.count {
            var wordEnd = wordStart
            while wordEnd < bytes.count, !isBoundary(bytes[wordEnd]) { wordEnd += 1 }
            if bytes[wordStart..<wordEnd].contains(atSign) {
                hidden += passwords(in: bytes, wordStart..<wordEnd)
            } else if let spanning = passwordWithBlanks(in: bytes, word: wordStart..<wordEnd) {
                hidden.append(spanning)
            }
            wordStart = wordEnd + 1
        }
        guard !hidden.isEmpty else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var next = 0
        for range in hidden.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.lowerBound >= next {
            out += bytes[next..<range.lowerBound]
            out += mask.utf8
            next = range.upperBound
        }
        out += bytes[next...]
        return String(decoding: out, as: UTF8.self)
    }

    /// The password spans of one word.
    private static func passwords(in bytes: [UInt8], _ word: Range<Int>) -> [Range<Int>] {
        var starts = [word.lowerBound]
        var index = word.lowerBound
        while index + 1 < word.upperBound {
            if bytes[index] == slash, bytes[index + 1] == slash,
                index == word.lowerBound || bytes[index - 1] == colonByte
            {
                starts.append(index + 2)
                index += 2
                continue
            }
            // `https:/host`: a scheme's colon and a single slash.
            if bytes[index] == colonByte, bytes[index + 1] == slash,
                index + 2 >= word.upperBound || bytes[index + 2] != slash,
                index > word.lowerBound, isSchemeByte(bytes[index - 1])
            {
                starts.append(index + 2)
            }
            index += 1
        }
        // The word's `@`s, found once: each start asks for the first past its authority, and a
        // scan to the word's end per start would be quadratic in a word of many `x:/`.
        let ats = word.filter { bytes[$0] == atSign }
        return starts.compactMap { password(in: bytes, from: $0, wordEnd: word.upperBound, ats: ats) }
    }

    /// The password of the authority starting at `start`, if any; `ats`: the positions of
    /// the word's `@`s, ascending.
    private static func password(in bytes: [UInt8], from start: Int, wordEnd: Int, ats: [Int]) -> Range<Int>? {
        guard start < wordEnd else { return nil }
        var end = start
        while end < wordEnd, bytes[end] != slash, bytes[end] != question, bytes[end] != hash { end += 1 }
        if let at = bytes[start..<end].lastIndex(of: atSign) {
            guard let colon = bytes[start..<at].firstIndex(of: colonByte) else { return nil }
            return colon + 1..<at
        }
        // No `@` before the path: a password holding `/`, `?` or `#` ends at the next `@`,
        // unless what follows the `:` is a port.
        guard let colon = bytes[start..<end].firstIndex(of: colonByte) else { return nil }
        let afterColon = bytes[(colon + 1)..<end]
        if afterColon.isEmpty || afterColon.allSatisfy(isDigit) { return nil }
        guard let at = firstAt(atOrAfter: end, in: ats) else { return nil }
        return colon + 1..<at
    }

    /// The first of the ascending positions `ats` at or after `position` (a binary search).
    private static func firstAt(atOrAfter position: Int, in ats: [Int]) -> Int? {
        var low = 0
        var high = ats.count
        while low < high {
            let middle = (low + high) / 2
            if ats[middle] < position { low = middle + 1 } else { high = middle }
        }
        return low < ats.count ? ats[low] : nil
    }

    /// A password holding a space or tab, as an `invalid` input line may have one
    /// (`http://user:pa ss@host/x`): `word` starts a URL's authority after `://`, holds a
    /// `:` followed by something other than a port, and ends at a blank before the
    /// authority did; the password runs on, across spaces and tabs, to the authority's last
    /// `@` before a `/`, `?`, `#`, quote or line end.
    private static func passwordWithBlanks(in bytes: [UInt8], word: Range<Int>) -> Range<Int>? {
        guard let scheme = firstIndex(of: [colonByte, slash, slash], in: bytes, word) else { return nil }
        let start = scheme + 3
        guard start < word.upperBound,
            !bytes[start..<word.upperBound].contains(where: { $0 == slash || $0 == question || $0 == hash }),
            let colon = bytes[start..<word.upperBound].firstIndex(of: colonByte),
            !bytes[(colon + 1)..<word.upperBound].allSatisfy(isDigit)
        else { return nil }
        var index = word.upperBound
        var lastAt: Int?
        while index < bytes.count {
            let byte = bytes[index]
            if byte == slash || byte == question || byte == hash { break }
            if isBoundary(byte) && byte != 0x20 && byte != 0x09 { break }
            if byte == atSign { lastAt = index }
            index += 1
        }
        return lastAt.map { colon + 1..<$0 }
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard range.count >= needle.count else { return nil }
        return (range.lowerBound...(range.upperBound - needle.count)).first {
            bytes[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    /// Blanks and quotes: what ends a word in a message (`'URL'`, `"URL"`, `<URL>`).
    private static func isBoundary(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x27 || byte == 0x22
            || byte == 0x3C || byte == 0x3E || byte == 0x60
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20) || isDigit(byte) || byte == 0x2B || byte == 0x2D || byte == 0x2E
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static let atSign = UInt8(ascii: "@")
    private static let colonByte = UInt8(ascii: ":")
    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")
}
