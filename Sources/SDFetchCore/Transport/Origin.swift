/// Scheme, host and port of a URL: the unit credentials and validators stay with.
///
/// <doc:Security>: on a redirect to another host, port or scheme, `-H` headers and
/// credential headers are dropped (unless `--location-trusted`), and validators a server
/// sent are kept only for the origin that sent them. Read from URL text as curl reports
/// it (`CURLINFO_EFFECTIVE_URL`) or as a ``URLKey`` holds it; the default port is filled
/// in, so `http://h/` and `http://h:80/` are one origin.
struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int

    /// nil when `url` has no `scheme://` or an unreadable port.
    init?(_ url: String) {
        guard let spans = URLSpans(url) else { return nil }
        let schemeEnd = url.utf8.index(spans.authority.lowerBound, offsetBy: -3)
        scheme = url[..<schemeEnd].lowercased()
        let hostPort = spans.hostAndPort(in: url)
        // `[::1]:8080`: the port follows the last `:` after any closing bracket.
        let afterBracket = hostPort.lastIndex(of: "]").map { hostPort[$0...] } ?? hostPort[...]
        if let colon = afterBracket.lastIndex(of: ":") {
            guard let port = Int(hostPort[hostPort.index(after: colon)...]) else { return nil }
            self.port = port
            host = hostPort[..<colon].lowercased()
        } else {
            port = scheme == "https" ? 443 : 80
            host = hostPort.lowercased()
        }
    }

    /// `host:port` with the effective port, as a TCP connection dials it.
    var authority: String { "\(host):\(port)" }
}

extension String {
    /// Whether this URL's authority has userinfo (`user@` or `user:password@`).
    var hasUserinfo: Bool {
        guard let spans = URLSpans(self) else { return false }
        return self[spans.authority].contains("@" as Character)
    }
}
