import SDFetchCore

/// The fetch options of the remote cache tier (README, "A cache shared by a fleet"),
/// appended to the table in `FetchCommand+Options.swift`.
extension FetchCommand {
    static let remoteOptions: [OptionSpec<FetchCommand>] = [
        OptionSpec(
            "remote-cache", .value("URL"),
            help: "also look in this HTTP or Redis cache after a local miss, and store downloads there; repeatable"
        ) {
            command, value, name in
            guard RemoteCacheOptions.isSupported(value), value.count > 8 else {
                if value.lowercased().hasPrefix("rediss://") {
                    throw UsageError("option \(name): rediss:// (Redis over TLS) is not supported; use a TLS tunnel")
                }
                throw UsageError(
                    "option \(name): the URL must be http://, https:// or redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?ttl=DUR]"
                )
            }
            command.options.remoteCache.urls.append(value)
        },
        OptionSpec(
            "remote-cache-mode", .value("MODE"), help: "read-write, or read-only for untrusted jobs",
            default: RemoteCacheMode.readWrite.rawValue, choices: RemoteCacheMode.allCases.map(\.rawValue)
        ) {
            command, value, name in
            command.options.remoteCache.mode = try ValueParsers.choice(value, option: name, of: RemoteCacheMode.self)
        },
    ]

    /// The variable holding a bearer token for the remote caches, read only with one named.
    static let remoteTokenVariable = "SDFETCH_REMOTE_CACHE_TOKEN"
}
