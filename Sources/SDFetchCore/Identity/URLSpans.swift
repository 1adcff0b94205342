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
        let bytes = url.utf8
        var index = bytes.startIndex
        var authorityStart: String.Index?
        while index != bytes.endIndex {
            if bytes[index] == UInt8(ascii: ":"), bytes[bytes.index(after: index)...].starts(with: "//".utf8) {
                authorityStart = bytes.index(index, offsetBy: 3)
                break
            }
            index = bytes.index(after: index)
        }
        guard let authorityStart else { return nil }
        let authorityEnd =
            bytes[authorityStart...].firstIndex { $0 == Self.slash || $0 == Self.question || $0 == Self.hash }
            ?? bytes.endIndex
        authority = authorityStart..<authorityEnd
        let pathEnd =
            bytes[authorityEnd...].firstIndex { $0 == Self.question || $0 == Self.hash } ?? bytes.endIndex
        path =
            authorityEnd != bytes.endIndex && bytes[authorityEnd] == Self.slash
            ? authorityEnd..<pathEnd : authorityEnd..<authorityEnd
    }

    /// Host and port of the authority, any userinfo (`user:pass@`) left out.
    public func hostAndPort(in url: String) -> Substring {
        let authority = url.utf8[self.authority]
        let start = authority.lastIndex(of: UInt8(ascii: "@")).map { url.utf8.index(after: $0) } ?? authority.startIndex
        return url[start..<self.authority.upperBound]
    }

    /// The path after its last `/`: the file name part; empty for `/` or no path.
    public func lastSegment(in url: String) -> Substring {
        let path = url.utf8[self.path]
        guard let slash = path.lastIndex(of: Self.slash) else { return "" }
        return url[url.utf8.index(after: slash)..<self.path.upperBound]
    }

    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")
}
