/// The identity of a URL for caching and de-duplication (SPEC "URL identity").
///
/// Scheme and host are lower-cased, the default port and the fragment removed, and an
/// empty path written `/`; path, query and percent-encoding are kept byte for byte, so
/// two spellings share a key only when the spec says they name the same resource.
public struct URLKey: Hashable, Sendable, CustomStringConvertible {
    /// The normalised URL text; also what is sent on the wire.
    public let string: String
    /// The fixed-size hash of ``string`` that names cache files and fills de-duplication sets.
    public let digest: KeyDigest
    /// `https` or `http`.
    public let scheme: String
    /// The lower-cased host, brackets kept for IPv6 literals.
    public let host: String

    /// Longest accepted input line, in bytes (SPEC "Precise rules").
    public static let maxLength = 8192

    public var description: String { string }

    /// Parses an input line that has already been trimmed.
    ///
    /// - Throws: ``InvalidURL`` naming what is wrong.
    public init(parsing text: some StringProtocol) throws(InvalidURL) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw InvalidURL(reason: "empty URL") }
        guard bytes.count <= Self.maxLength else {
            throw InvalidURL(reason: "longer than \(Self.maxLength) bytes")
        }
        if let bad = bytes.first(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw InvalidURL(reason: bad == 0x20 || bad == 0x09 ? "contains whitespace" : "contains a control character")
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            throw InvalidURL(reason: "not an absolute URL")
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https" else {
            if scheme.isEmpty || !scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) {
                throw InvalidURL(reason: "not an absolute URL")
            }
            throw InvalidURL(reason: "unsupported scheme \"\(scheme)\" (only http and https)")
        }
        var rest = bytes[(colon + 1)...]
        guard rest.starts(with: "//".utf8) else { throw InvalidURL(reason: "not an absolute URL") }
        rest = rest.dropFirst(2)

        let authorityEnd = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var tail = rest[authorityEnd...]
        if let hash = tail.firstIndex(of: UInt8(ascii: "#")) { tail = tail[..<hash] }

        // Userinfo is kept verbatim; only the host part is normalised.
        let hostPortStart = authority.lastIndex(of: UInt8(ascii: "@")).map { authority.index(after: $0) } ?? authority.startIndex
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
        let host = String(decoding: hostBytes, as: UTF8.self).lowercased()

        var portSuffix = ""
        if let portBytes, !portBytes.isEmpty {
            guard portBytes.count <= 5, portBytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let port = Int(String(decoding: portBytes, as: UTF8.self)), port <= 65535
            else { throw InvalidURL(reason: "bad port") }
            let defaultPort = scheme == "https" ? 443 : 80
            if port != defaultPort { portSuffix = ":\(port)" }
        }

        var path = String(decoding: tail, as: UTF8.self)
        if !path.hasPrefix("/") { path = "/" + path }
        let normalised = "\(scheme)://\(String(decoding: userinfo, as: UTF8.self))\(host)\(portSuffix)\(path)"
        self.string = normalised
        self.scheme = scheme
        self.host = host
        self.digest = KeyDigest(of: normalised)
    }

    public static func == (lhs: URLKey, rhs: URLKey) -> Bool { lhs.string == rhs.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}

/// Why an input line is not a usable URL; `reason` is lower-case and names the problem.
public struct InvalidURL: Error, Sendable, Equatable {
    public let reason: String
}
