import FoundationEssentials

/// Where a Redis remote is and how to use it, from `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?ttl=DUR]`
/// (the URL form redis-cli and most clients take; README, "A cache shared by a fleet").
///
/// `ttl`: seconds, or with `s`, `m`, `h`, `d`; the keys written then expire, which is the
/// remote's eviction when no `maxmemory-policy` does it. At most ``maxTTLSeconds``: a longer
/// one is refused with the URL rather than sent to a server that would refuse every `SET`.
public struct RemoteRedisAddress: Sendable, Equatable {
    public var host: String
    public var port = 6379
    public var user: String?
    public var password: String?
    public var database = 0
    public var ttlSeconds: Int?

    /// The longest `ttl` read: 100 years, far inside what Redis takes for `EX` (its
    /// expiry in milliseconds from now must fit in 64 bits).
    public static let maxTTLSeconds = 100 * 365 * 86400

    /// The address in `url`, or nil when it is not a `redis://` URL this reads.
    public init?(parsing url: String) {
        guard url.lowercased().hasPrefix("redis://"), let parts = URLComponents(string: url),
            let host = parts.host, !host.isEmpty
        else { return nil }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if let port = parts.port {
            guard (1...65535).contains(port) else { return nil }
            self.port = port
        }
        // URLComponents' user and password come percent-decoded.
        user = parts.user.flatMap { $0.isEmpty ? nil : $0 }
        password = parts.password
        let path = parts.path.drop { $0 == "/" }
        if !path.isEmpty {
            guard let database = Int(path), database >= 0 else { return nil }
            self.database = database
        }
        for item in parts.queryItems ?? [] {
            guard item.name == "ttl", let seconds = item.value.flatMap(Self.seconds), seconds > 0 else { return nil }
            ttlSeconds = seconds
        }
    }

    /// `90`, `90s`, `15m`, `12h`, `14d`; nil past ``maxTTLSeconds``.
    private static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let last = text.last else { return nil }
        let unit = units[last]
        guard let count = Int(unit == nil ? Substring(text) : text.dropLast()) else { return nil }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit ?? 1)
        return overflow || seconds > maxTTLSeconds ? nil : seconds
    }

    /// `AUTH` and `SELECT`, as a new connection sends them first.
    var setupCommands: [[[UInt8]]] {
        var commands: [[[UInt8]]] = []
        if let password {
            commands.append([Array("AUTH".utf8)] + (user.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)])
        }
        if database != 0 { commands.append([Array("SELECT".utf8), Array(String(database).utf8)]) }
        return commands
    }
}
