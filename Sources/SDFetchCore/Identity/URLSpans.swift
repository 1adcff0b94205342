/// Where the authority and the path lie in the text of an absolute URL: the one scanner of
/// URL text after parsing (``URLKey/init(parsing:)`` validates as it splits, and everything
/// later reads its output through this type: the host of a request, the password to mask,
/// the last path segment of an `-o` name).
///
/// Scans UTF-8 bytes: it runs for every request and every printed result of a warm run,
/// where Foundation's `range(of:)` cost more than the rest of a cache hit.
public struct URLSpans: Sendable {
    /// After `://`, up to the first `/`, `?` or `#`: userinfo, host and port.
    public let authority: Range<String.Index>
    /// From the first `/` after the authority up to `?`, `#` or the end; empty when the URL
    /// has no path (a ``URLKey`` always has one).
    public let path: Range<String.Index>

    /// nil when `url` has no `scheme://`.
    public init?(_ url: String) {
        guard let offsets = url.withUTF8Bytes(Self.offsets(in:)) else { return nil }
        let utf8 = url.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        authority = index(offsets.authority.lowerBound)..<index(offsets.authority.upperBound)
        path = index(offsets.path.lowerBound)..<index(offsets.path.upperBound)
    }

    /// The byte offsets of the last path segment (after the path's last `/`, before `?` or
    /// `#`) in a URL's bytes: what an `-o` name is made of, found without making a string.
    package static func lastSegment(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let path = offsets(in: bytes)?.path else { return nil }
        var start = path.upperBound
        while start > path.lowerBound, bytes[start - 1] != slash { start -= 1 }
        return start > path.lowerBound ? start..<path.upperBound : nil
    }

    /// The two spans as byte offsets.
    private static func offsets(in bytes: UnsafeBufferPointer<UInt8>) -> (authority: Range<Int>, path: Range<Int>)? {
        var index = 0
        while index + 2 < bytes.count,
            !(bytes[index] == colon && bytes[index + 1] == slash && bytes[index + 2] == slash)
        {
            index += 1
        }
        guard index + 2 < bytes.count else { return nil }
        let authorityStart = index + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, bytes[authorityEnd] != slash, bytes[authorityEnd] != question,
            bytes[authorityEnd] != hash
        {
            authorityEnd += 1
        }
        var pathEnd = authorityEnd
        while pathEnd < bytes.count, bytes[pathEnd] != question, bytes[pathEnd] != hash { pathEnd += 1 }
        let hasPath = authorityEnd < bytes.count && bytes[authorityEnd] == slash
        return (authorityStart..<authorityEnd, authorityEnd..<(hasPath ? pathEnd : authorityEnd))
    }

    /// Host and port of the authority, any userinfo (`user:pass@`) left out.
    public func hostAndPort(in url: String) -> Substring {
        let authority = url.utf8[self.authority]
        let start = authority.lastIndex(of: UInt8(ascii: "@")).map { url.utf8.index(after: $0) } ?? authority.startIndex
        return url[start..<self.authority.upperBound]
    }

    /// The path after its last `/`: the file name part; empty for `/` or no path.
    public func lastSegment(in url: String) -> Substring {
        let path = url[self.path]
        let length = path.withUTF8Bytes { bytes in
            var index = bytes.count
            while index > 0, bytes[index - 1] != Self.slash { index -= 1 }
            return index == 0 ? nil : bytes.count - index
        }
        guard let length else { return "" }
        return path[path.utf8.index(path.endIndex, offsetBy: -length)...]
    }

    private static let colon = UInt8(ascii: ":")
    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")
}
