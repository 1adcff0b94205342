/// The identity of a URL for caching and de-duplication (<doc:Fetching#URL-identity>).
///
/// Scheme and host are lower-cased, the default port and the fragment removed, and an
/// empty path written `/`; userinfo, path and query are written as a browser sends them
/// (`PercentEncoding`: a space is `%20`, a backslash in the path `/`), and otherwise
/// kept byte for byte, so two spellings share a key only when they send the same request.
public struct URLKey: Hashable, Sendable, CustomStringConvertible {
    /// The normalised URL text: the identity, and what is sent on the wire unless
    /// `--key-ignore-query` left parameters out of it (``request``, <doc:Fetching#Signed-URLs>).
    public internal(set) var string: String
    /// The request's URL when it differs from ``string`` (``KeyQueryFilter``); nil: ``string``.
    var sentString: String? = nil
    /// The fixed-size hash that names cache files and fills de-duplication sets: of
    /// ``string`` with the password of its authority written `***`, so a cache holds
    /// nothing a password guess could be checked against (<doc:OnDiskFormat>). URLs that
    /// differ only in that password name one image; ``redacted``, which masks anything
    /// that looks like a password (in a query too), is what is printed and stored, and
    /// for such a URL it is not the text hashed here.
    public internal(set) var digest: KeyDigest
    /// `https` or `http`.
    public let scheme: String
    /// The lower-cased host, brackets kept for IPv6 literals.
    public let host: String

    /// Longest accepted input line, in bytes (<doc:Fetching#URL-identity>).
    public static let maxLength = 8192

    public var description: String { string }

    /// What is requested: ``string`` with the query parameters the key leaves out.
    public var request: String { sentString ?? string }

    /// Whether the request carries query parameters the key leaves out (a signature): its
    /// failures say nothing about the next signature (<doc:Fetching#Signed-URLs>).
    public var carriesIgnoredParameters: Bool { sentString != nil }

    /// Parses an input line that has already been trimmed.
    ///
    /// - Throws: ``InvalidURL`` naming what is wrong.
    public init(parsing text: some StringProtocol) throws(InvalidURL) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw InvalidURL(reason: "empty URL") }
        guard bytes.count <= Self.maxLength else {
            throw InvalidURL(reason: "longer than \(Self.maxLength) bytes")
        }
        // A space inside is sent as `%20`, as browsers do; a tab, CR, LF or other control
        // character is the line's fault (a browser would drop or keep it unseen).
        let firstBad = bytes.firstIndex(where: { $0 < 0x20 || $0 == 0x7F })
        // `not a url` is no URL at all: say so, rather than that it holds a space.
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon < (firstBad ?? bytes.endIndex),
            !bytes[..<colon].contains(0x20)
        else {
            throw InvalidURL(reason: "not an absolute http or https URL")
        }
        if let firstBad {
            throw InvalidURL(reason: bytes[firstBad] == 0x09 ? "contains a tab" : "contains a control character")
        }
        // Lower-case text as written needs no lowering (nor a string of its own).
        let writtenScheme: String? =
            bytes[..<colon].elementsEqual("http".utf8)
            ? "http" : bytes[..<colon].elementsEqual("https".utf8) ? "https" : nil
        let scheme = writtenScheme ?? String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https" else {
            if scheme.isEmpty || !scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) {
                throw InvalidURL(reason: "not an absolute URL")
            }
            throw InvalidURL(reason: "unsupported scheme \"\(scheme)\" (only http and https)")
        }
        var rest = bytes[(colon + 1)...]
        // Browsers read a backslash as a slash in http and https URLs: `https:\\host\a.png`.
        guard rest.count >= 2, rest.prefix(2).allSatisfy(Self.isSlash) else {
            throw InvalidURL(reason: "not an absolute URL")
        }
        rest = rest.dropFirst(2)

        let authorityEnd =
            rest.firstIndex(where: { Self.isSlash($0) || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var tail = rest[authorityEnd...]
        if let hash = tail.firstIndex(of: UInt8(ascii: "#")) { tail = tail[..<hash] }

        // Userinfo is kept verbatim; only the host part is normalised. curl refuses a second
        // `@` in the authority: left in, it would fail as a connect error and count against
        // the host (`URLKeyTests`), so it is `invalid` here.
        let ats = authority.lazy.filter { $0 == UInt8(ascii: "@") }.count
        guard ats <= 1 else { throw InvalidURL(reason: "more than one '@' before the host") }
        let hostPortStart =
            authority.firstIndex(of: UInt8(ascii: "@")).map { authority.index(after: $0) } ?? authority.startIndex
        let userinfo = authority[authority.startIndex..<hostPortStart]
        let hostPort = authority[hostPortStart...]
        var hostBytes = hostPort[...]
        var portBytes: ArraySlice<UInt8>? = nil
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else {
                throw InvalidURL(reason: "unterminated IPv6 address")
            }
            hostBytes = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if let first = after.first {
                guard first == UInt8(ascii: ":") else { throw InvalidURL(reason: "bad port") }
                portBytes = after.dropFirst()
            }
        } else if let portColon = hostPort.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = hostPort[..<portColon]
            portBytes = hostPort[hostPort.index(after: portColon)...]
        }
        guard !hostBytes.isEmpty, !hostBytes.elementsEqual("[]".utf8) else { throw InvalidURL(reason: "no host") }
        try Self.checkHost(hostBytes)
        let isHostLower = hostBytes.allSatisfy { $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        let host =
            isHostLower
            ? String(decoding: hostBytes, as: UTF8.self) : String(decoding: hostBytes, as: UTF8.self).lowercased()

        var portSuffix = ""
        if let portBytes, !portBytes.isEmpty {
            guard portBytes.count <= 5, portBytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let port = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(port)
            else { throw InvalidURL(reason: "bad port") }
            let defaultPort = scheme == "https" ? 443 : 80
            if port != defaultPort { portSuffix = ":\(port)" }
        }

        let (user, password) = Self.userinfoParts(userinfo)
        let encodedUser = PercentEncoding.userinfoPart(user)
        let encodedPassword = password.flatMap(PercentEncoding.userinfoPart)
        let encodedTail = PercentEncoding.tail(tail)
        // Most lines are written normalised already: the key is then the line's own text.
        let isPortAsWritten = portBytes == nil || (portBytes?.first != UInt8(ascii: "0") && !portSuffix.isEmpty)
        let hasPlainSlashes = bytes[colon + 1] == UInt8(ascii: "/") && bytes[colon + 2] == UInt8(ascii: "/")
        let isEncodedAsWritten = encodedTail == nil && encodedUser == nil && encodedPassword == nil
        let isAsWritten =
            writtenScheme != nil && isHostLower && isPortAsWritten && tail.first == UInt8(ascii: "/")
            && tail.endIndex == bytes.endIndex && hasPlainSlashes && isEncodedAsWritten
        let normalised: String
        if isAsWritten {
            normalised = String(text)
        } else {
            var path = String(decoding: encodedTail ?? Array(tail), as: UTF8.self)
            if !path.hasPrefix("/") { path = "/" + path }
            var info = String(decoding: encodedUser ?? Array(user), as: UTF8.self)
            if let password { info += ":" + String(decoding: encodedPassword ?? Array(password), as: UTF8.self) }
            if !userinfo.isEmpty { info += "@" }
            normalised = "\(scheme)://\(info)\(host)\(portSuffix)\(path)"
        }
        self.string = normalised
        self.scheme = scheme
        self.host = host
        // A keyed hash would need a secret: kept in the cache it hides nothing from whoever
        // reads the cache, kept elsewhere it makes caches unmergeable. Leaving the password
        // out of the key does neither. Only the authority's password is left out: text
        // that looks like one further on (`?src=http://u:ONE@origin/a.png`) is part of
        // what is requested, and two such URLs are two images.
        self.digest = KeyDigest(of: Self.authorityMasked(normalised, hasPassword: password != nil))
    }

    /// The user name and the password (nil: no `:`) of `userinfo`, its `@` left out.
    private static func userinfoParts(
        _ userinfo: ArraySlice<UInt8>
    ) -> (user: ArraySlice<UInt8>, password: ArraySlice<UInt8>?) {
        let info = userinfo.last == UInt8(ascii: "@") ? userinfo.dropLast() : userinfo
        guard let colon = info.firstIndex(of: UInt8(ascii: ":")) else { return (info, nil) }
        return (info[..<colon], info[(colon + 1)...])
    }

    /// `key` with the password of its authority written ``Redaction/mask``: what the digest
    /// is taken of. A key's authority holds at most one `@`, and its first `:` before it
    /// ends the user name.
    static func authorityMasked(_ key: String, hasPassword: Bool) -> String {
        guard hasPassword, let spans = URLSpans(key) else { return key }
        let authority = key[spans.authority]
        guard let at = authority.firstIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return key
        }
        return String(key[..<key.index(after: colon)]) + Redaction.mask + String(key[at...])
    }

    private static func isSlash(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") }

    /// `host` or `host:port` as in ``string``, without userinfo: whom the request goes to.
    public var hostAndPort: String {
        URLSpans(string).map { String($0.hostAndPort(in: string)) } ?? host
    }

    /// `scheme://host` or `scheme://host:port` as in ``string`` (the default port dropped),
    /// without userinfo: the unit of `--per-host`, of host health and of `host-down`
    /// (<doc:Fetching#Retries-and-timeouts>), so a dead port 80 never takes the same name's
    /// HTTPS down.
    public var origin: String { Self.origin(of: string) }

    /// ``origin`` of URL text as a key holds it (``request`` or ``string``); empty when it
    /// has no `scheme://`.
    static func origin(of url: String) -> String {
        guard let spans = URLSpans(url) else { return "" }
        return String(url[..<spans.authority.lowerBound]) + spans.hostAndPort(in: url)
    }

    /// ``string`` with any password in the userinfo written `***` (`user:***@host`): what is
    /// printed, reported and stored (<doc:Security#Credentials>).
    public var redacted: String { Self.redacting(string) }

    /// `text` with any password masked as `***`: ``Redaction/masked(_:)``, the one masking
    /// function, under the name callers of ``URLKey`` look for.
    public static func redacting(_ text: String) -> String { Redaction.masked(text) }

    /// Rejects what curl's URL parser would refuse in a host name (it would otherwise be
    /// reported as a connect failure and count against the host).
    private static func checkHost(_ host: ArraySlice<UInt8>) throws(InvalidURL) {
        if host.first == UInt8(ascii: "[") {
            // An IPv6 literal: hex digits, colons, dots (an embedded IPv4), and a `%25` zone.
            let inner = host.dropFirst().dropLast()
            let zoneStart = inner.firstIndex(of: UInt8(ascii: "%")) ?? inner.endIndex
            let address = inner[..<zoneStart]
            guard address.contains(UInt8(ascii: ":")),
                address.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { throw InvalidURL(reason: "bad IPv6 address") }
            return
        }
        if host.contains(where: { refusedHostBytes[Int($0)] }) { throw InvalidURL(reason: "bad host name") }
    }

    /// The bytes curl's hostname check refuses (lib/urlapi.c, hostname_check's strcspn set),
    /// as a 256-entry table: this runs for every input line.
    private static let refusedHostBytes: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in " \r\n\t/:#?!@{}[]\\$'\"^`*<>=;,+&()%".utf8 { table[Int(byte)] = true }
        return table
    }()

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    public static func == (lhs: URLKey, rhs: URLKey) -> Bool { lhs.string == rhs.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}
