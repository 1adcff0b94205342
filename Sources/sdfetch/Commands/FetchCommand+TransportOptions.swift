import SDFetchCore

/// The fetch options about how requests go out (issue 14's politeness, TLS, proxy, `-v`),
/// appended to the table in `FetchCommand+Options.swift`: the same rows drive parsing,
/// `--help`, the man page, the completions and the config file.
extension FetchCommand {
    static let transportOptions: [OptionSpec<FetchCommand>] = [
        OptionSpec("per-host", .value("N"), help: "at most N transfers in flight to one host, 0 = no limit",
            default: "\(FetchOptions().pacing.perHost)")
        {
            c, v, n in
            c.options.pacing.perHost = try ValueParsers.integer(v, option: n, in: 0...1024)
        },
        OptionSpec("wait", .value("DUR"), help: "at least DUR between request starts to one host",
            default: ValueText.duration(FetchOptions().pacing.wait)) {
            c, v, n in
            let wait = try ValueParsers.duration(v, option: n)
            guard wait <= .seconds(86_400) else { throw UsageError("option \(n): the wait must be at most 1d") }
            c.options.pacing.wait = wait
        },
        OptionSpec("limit-rate", .value("RATE"), help: "total download rate cap, K/M/G per second") { c, v, n in
            c.options.pacing.bytesPerSecond = try ValueParsers.rate(v, option: n)
        },
        OptionSpec("max-time", .value("SEC"), help: "bound on one whole transfer, redirects included (default none)") {
            c, v, n in
            let limit = try ValueParsers.duration(v, option: n)
            guard limit > .zero else { throw UsageError("option \(n): the time must be more than 0") }
            c.options.maxTime = limit
        },
        OptionSpec("cacert", .value("FILE"), help: "trust the CA certificates in FILE (PEM) instead of the system's") {
            c, v, n in
            c.options.connection.caCertificateFile = try ValueParsers.readableFile(v, option: n)
        },
        OptionSpec("insecure", short: "k", help: "do not verify TLS certificates (connections stay encrypted)") {
            c, _, _ in
            c.options.connection.isInsecure = true
        },
        OptionSpec("proxy", .value("URL"), help: "send every request through this proxy (default: http_proxy etc.)") {
            c, v, n in
            c.options.connection.proxy = try ValueParsers.proxy(v, option: n)
        },
        OptionSpec("verbose", short: "v", help: "also report retries, redirects, revalidations and waits") { c, _, _ in
            c.isVerbose = true
        },
    ]
}
