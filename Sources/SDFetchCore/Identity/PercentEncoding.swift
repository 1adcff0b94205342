/// What a browser sends for the userinfo, path and query of an `http` or `https` URL: the
/// WHATWG URL standard's percent-encode sets (<doc:Fetching#URL-identity>).
///
/// A byte of a component's set is written `%XX` with upper-case hex (a space is `%20`,
/// each byte of a non-ASCII character its own `%XX`); a backslash in the path is read as
/// `/`; `%` is never touched, so text already encoded keeps its spelling and two spellings
/// that encode alike become one key. Control characters never get here: a line holding
/// one is `invalid` (``URLKey/init(parsing:)``).
enum PercentEncoding {
    /// The path and query (`/…?…`, fragment already cut) as sent, or nil when they need no
    /// change: nearly every line, which then keeps its own text as its key.
    static func tail(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.contains(where: { tailSets[Int($0)] != 0 }) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var inQuery = false
        for byte in bytes {
            if !inQuery && byte == UInt8(ascii: "?") {
                inQuery = true
                out.append(byte)
            } else if !inQuery && byte == UInt8(ascii: "\\") {
                out.append(UInt8(ascii: "/"))
            } else if tailSets[Int(byte)] & (inQuery ? querySet : pathSet) != 0 {
                append(byte, to: &out)
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// A user name or a password, encoded with the userinfo set (its `:` and `@` included,
    /// so a second `:` stays inside the password), or nil when it needs no change.
    static func userinfoPart(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.contains(where: { userinfoSet[Int($0)] }) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        for byte in bytes {
            if userinfoSet[Int(byte)] { append(byte, to: &out) } else { out.append(byte) }
        }
        return out
    }

    private static func append(_ byte: UInt8, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
    }

    private static let pathSet: UInt8 = 1
    private static let querySet: UInt8 = 2
    /// A backslash: not encoded, but read as `/` in the path.
    private static let backslash: UInt8 = 4

    /// Per byte, the sets it belongs to. Both: the C0 controls (refused before), space, `"`,
    /// `<`, `>` and every byte above `~`. The path set adds `` ` ``, `{`, `}` and `^` (`?`
    /// and `#` end it); the special-query set adds `'` (`#` ends it).
    private static let tailSets: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in 0..<256 where byte <= 0x20 || byte > 0x7E { table[byte] = pathSet | querySet }
        for byte in "\"<>".utf8 { table[Int(byte)] = pathSet | querySet }
        for byte in "`{}^".utf8 { table[Int(byte)] = pathSet }
        table[Int(UInt8(ascii: "'"))] = querySet
        table[Int(UInt8(ascii: "\\"))] = backslash
        return table
    }()

    /// The userinfo set: the path set and `/ : ; = @ [ \ ] ^ |`.
    private static let userinfoSet: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in 0..<256 where byte <= 0x20 || byte > 0x7E { table[byte] = true }
        for byte in "\"<>`{}^/:;=@[\\]|".utf8 { table[Int(byte)] = true }
        return table
    }()
}
