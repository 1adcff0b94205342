import SDFetchCore

/// The fetch options about how requests go out (politeness, TLS, proxy, `-v`: README,
/// "Everyday commands"), appended to the table in `FetchCommand+Options.swift`: the same
/// rows drive parsing, `--help`, the man page, the completions and the config file.
extension FetchCommand {
    static let transportOptions: [OptionSpec<FetchCommand>] = [
        OptionSpec(
            "per-host", .value("N"),
            help: "at most N connections to one host (HTTP/2: one, up to 100 streams), 0 = no limit",
            default: "\(FetchOptions().pacing.perHost)"
        ) {
            command, value, name in
            command.options.pacing.perHost = try ValueParsers.integer(value, option: name, in: 0...1024)
        },
        OptionSpec(
            "wait", .value("DUR"), help: "at least DUR between request starts to one host",
            default: ValueText.duration(FetchOptions().pacing.wait)
        ) {
            command, value, name in
            let wait = try ValueParsers.duration(value, option: name)
            guard wait <= .seconds(86_400) else { throw UsageError("option \(name): the wait must be at most 1d") }
            command.options.pacing.wait = wait
        },
        OptionSpec("limit-rate", .value("RATE"), help: "total download rate cap, K/M/G per second") {
            command, value, name in
            command.options.pacing.bytesPerSecond = try ValueParsers.rate(value, option: name)
        },
        OptionSpec("max-time", .value("SEC"), help: "bound on one whole transfer, redirects included (default none)") {
            command, value, name in
            let limit = try ValueParsers.duration(value, option: name)
            guard limit > .zero else { throw UsageError("option \(name): the time must be more than 0") }
            command.options.maxTime = limit
        },
        OptionSpec(
            "speed-limit", .value("RATE"),
            help: "a transfer slower than RATE bytes/s (K/M) over --speed-time fails as timeout, 0 = off",
            default: ValueText.size(FetchOptions().lowSpeed.bytesPerSecond)
        ) {
            command, value, name in
            var body = Substring(value)
            if body.lowercased().hasSuffix("/s") { body = body.dropLast(2) }
            let rate = try ValueParsers.size(String(body), option: name)
            guard rate <= 1 << 30 else { throw UsageError("option \(name): the rate must be at most 1G") }
            command.options.lowSpeed.bytesPerSecond = rate
        },
        OptionSpec(
            "speed-time", .value("SEC"), help: "the window over which --speed-limit is measured",
            default: ValueText.seconds(FetchOptions().lowSpeed.window)
        ) {
            command, value, name in
            let window = try ValueParsers.duration(value, option: name, atMost: .seconds(86_400))
            guard window > .zero else { throw UsageError("option \(name): the time must be more than 0") }
            command.options.lowSpeed.window = window
        },
        OptionSpec("cacert", .value("FILE"), help: "trust the CA certificates in FILE (PEM) instead of the system's") {
            command, value, name in
            command.options.connection.caCertificateFile = try ValueParsers.readableFile(value, option: name)
        },
        OptionSpec("insecure", short: "k", help: "do not verify TLS certificates (connections stay encrypted)") {
            command, _, _ in
            command.options.connection.isInsecure = true
        },
        OptionSpec("proxy-insecure", help: "do not verify an HTTPS proxy's certificate (-k does not cover it)") {
            command, _, _ in
            command.options.connection.isProxyInsecure = true
        },
        OptionSpec(
            "location-trusted", help: "keep -H headers (Authorization, Cookie...) on redirects to other hosts"
        ) {
            command, _, _ in
            command.options.connection.trustsRedirectHosts = true
        },
        OptionSpec("proxy", .value("URL"), help: "send every request through this proxy (default: http_proxy etc.)") {
            command, value, name in
            command.options.connection.proxy = try ValueParsers.proxy(value, option: name)
        },
        OptionSpec("verbose", short: "v", help: "also report retries, redirects, revalidations and waits") {
            command, _, _ in
            command.isVerbose = true
        },
    ]
}
