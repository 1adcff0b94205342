import FoundationEssentials
import Glibc

/// Values of the transport options: rates, proxies, files.
extension ValueParsers {
    /// `--limit-rate`: a size per second (`500K`, `2M`, optionally followed by `/s`), more than 0.
    static func rate(_ text: String, option: String) throws(UsageError) -> Int64 {
        var body = Substring(text)
        if body.lowercased().hasSuffix("/s") { body = body.dropLast(2) }
        let bytes: Int64
        do throws(UsageError) {
            bytes = try size(String(body), option: option)
        } catch {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a rate (bytes per second, or a number with K, M or G, e.g. 500K)"
            )
        }
        guard bytes > 0 else { throw UsageError("option \(option): the rate must be more than 0") }
        return bytes
    }

    /// `--proxy`: a URL with a host, as curl takes it (`http://`, `https://`, `socks5h://`, or a bare `host:port`).
    static func proxy(_ text: String, option: String) throws(UsageError) -> String {
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }),
            isProxyURL(text)
        else {
            throw UsageError(
                "option \(option): '\(Escaping.terminal(text))' is not a proxy URL (e.g. http://proxy:3128; "
                    + "schemes: \(proxySchemes.sorted().joined(separator: ", ")))")
        }
        return text
    }

    /// The proxy schemes libcurl speaks; none (`proxy:3128`) means `http`.
    static let proxySchemes: Set = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// `[scheme://][user:password@]host[:port][/]`, checked as curl would use it, so a typo is a
    /// usage error rather than every URL failing with "unsupported proxy syntax".
    private static func isProxyURL(_ text: String) -> Bool {
        var rest = Substring(text)
        let parts = rest.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard proxySchemes.contains(parts[0].lowercased()) else { return false }
            rest = parts[1]
        }
        var authority = rest.prefix { $0 != "/" }
        guard rest.dropFirst(authority.count).allSatisfy({ $0 == "/" }) else { return false }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var port: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]"), close > authority.index(after: authority.startIndex) else {
                return false
            }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return false }
            port = after.dropFirst()
        } else {
            if let colon = authority.lastIndex(of: ":") {
                port = authority[authority.index(after: colon)...]
                authority = authority[..<colon]
                guard !port.isEmpty else { return false }
            }
            guard !authority.isEmpty, !authority.contains(where: { "[]@".contains($0) }) else { return false }
        }
        return port.isEmpty || (port.allSatisfy({ $0.isASCII && $0.isNumber }) && (Int(port) ?? 65536) <= 65535)
    }

    /// A file that must be readable now (`--cacert`): a missing bundle is a usage error, not
    /// a `tls` failure on every URL. Only a regular file: curl would block forever opening a
    /// FIFO (and read a device without end).
    static func readableFile(_ text: String, option: String) throws(UsageError) -> String {
        guard !text.isEmpty, access(text, R_OK) == 0 else {
            throw UsageError("option \(option): cannot read '\(Escaping.terminal(text))'")
        }
        var info = stat()
        guard stat(text, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw UsageError("option \(option): '\(Escaping.terminal(text))' is not a regular file")
        }
        return text
    }
}
