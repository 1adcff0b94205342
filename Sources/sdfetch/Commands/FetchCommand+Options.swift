import SDFetchCore

/// The fetch option table (sdfetch(1) FETCH OPTIONS): parsing, `--help` and suggestions all read
/// it.
extension FetchCommand {
    static let name = "fetch"
    static let usage = "[fetch] [OPTIONS] [FILE|URL ...]"
    static let summary = "download, verify and cache the images of URL lists (the default)"
    static let abstract = """
        Fetch the image URLs listed in each FILE (one per line, or a CSV, TSV or JSON Lines \
        table with a url column; '-', or no FILE with a piped standard input, reads standard \
        input) into the cache, printing STATUS<TAB>PATH<TAB>URL per unique URL. An argument \
        that is an http:// or https:// URL is a URL to fetch, as in curl, even when a path \
        spelt so exists (a file named like a URL is read as ./https:...); with one such URL, -o names the \
        output file, as curl's -o does, unless it ends in / or is a directory. URLs are sent as \
        browsers send them: a space inside is %20, a backslash in the path /.
        """

    /// Where every default in the table comes from: stated once, in ``FetchOptions``.
    private static let defaults = FetchOptions()

    static let options: [OptionSpec<FetchCommand>] =
        [
            OptionSpec(
                "concurrency", short: "j", .value("N"), help: "transfers in flight at once, 1-1024",
                default: "\(defaults.concurrency)"
            ) { command, value, name in
                command.options.concurrency = try ValueParsers.integer(value, option: name, in: 1...1024)
            },
            OptionSpec(
                "timeout", short: "t", .value("SEC"), help: "connect and stall timeout in seconds",
                default: ValueText.seconds(defaults.timeout)
            ) { command, value, name in
                // A day: more is no timeout at all, and curl takes milliseconds in a C long.
                let timeout = try ValueParsers.duration(value, option: name, atMost: .seconds(86400))
                guard timeout > .zero else { throw UsageError("option \(name): the timeout must be more than 0") }
                command.options.timeout = timeout
            },
            OptionSpec(
                "retries", .value("N"), help: "extra tries for transient failures", default: "\(defaults.retries)"
            ) { command, value, name in
                command.options.retries = try ValueParsers.integer(value, option: name, in: 0...100)
            },
            OptionSpec(
                "max-age", .value("DUR"), help: "freshness of cache entries and failure records, s/m/h/d/w",
                default: ValueText.duration(defaults.maxAge)
            ) { command, value, name in
                command.options.maxAge = try ValueParsers.duration(value, option: name)
            },
            OptionSpec(
                "max-cache-size", .value("SIZE"), help: "cache cap enforced after the run, K/M/G",
                default: ValueText.size(defaults.maxCacheSize)
            ) { command, value, name in
                command.options.maxCacheSize = try ValueParsers.size(value, option: name)
            },
            OptionSpec("refresh", help: "revalidate cached entries with a conditional request") { command, _, _ in
                command.options.refresh = true
            },
            OptionSpec("offline", help: "never use the network: cache hits, and misses as failures") { command, _, _ in
                command.options.offline = true
            },
            OptionSpec("ignore-opt-outs", help: "store images whose X-Robots-Tag opts them out of AI use") {
                command, _, _ in
                command.options.ignoreOptOuts = true
            },
            OptionSpec(
                "retry-failed", help: "ignore failed-URL records (a success removes the record) and hosts found down"
            ) {
                command, _, _ in
                command.options.retryFailed = true
            },
            OptionSpec(
                "verify", .value("MODE"), help: "check of downloaded bytes: structure, full, header or none",
                default: defaults.verify.rawValue, choices: VerifyMode.allCases.map(\.rawValue)
            ) { command, value, name in
                command.options.verify = try ValueParsers.choice(value, option: name, of: VerifyMode.self)
            },
            OptionSpec(
                "max-bytes", .value("SIZE"), help: "largest accepted body, K/M/G",
                default: ValueText.size(defaults.maxBytes)
            ) { command, value, name in
                command.options.maxBytes = try ValueParsers.size(value, option: name)
            },
            OptionSpec(
                "max-pixels", .value("N"), help: "largest accepted width x height", default: "\(defaults.maxPixels)"
            ) { command, value, name in
                // 10^12 pixels is a terapixel: past any decodable image, and width x height sums stay far from overflow.
                command.options.maxPixels = Int64(
                    try ValueParsers.integer(value, option: name, in: 1...1_000_000_000_000))
            },
            OptionSpec(
                "max-redirects", .value("N"), help: "redirects followed, http/https only",
                default: "\(defaults.maxRedirects)"
            ) { command, value, name in
                command.options.maxRedirects = try ValueParsers.integer(value, option: name, in: 0...100)
            },
            OptionSpec(
                "host-failures", .value("N"),
                help: "connect failures in a row before a host is 'host-down' (never answered: 1 timeout), 0 = off",
                default: "\(defaults.hostFailures)"
            ) {
                command, value, name in
                command.options.hostFailures = try ValueParsers.integer(value, option: name, in: 0...1_000_000)
            },
            OptionSpec(
                "host-down-for", .value("DUR"),
                help: "remember a host found down (no answer, unresolvable) in the cache for DUR, up to 1d; 0 = off",
                default: ValueText.duration(defaults.hostDownFor)
            ) {
                command, value, name in
                command.options.hostDownFor = try ValueParsers.duration(
                    value, option: name, atMost: HostDownMemory.longest)
            },
            OptionSpec(
                "fail-on", .value("STATUSES"),
                help: "statuses that make the exit status 1: failed, skipped, invalid, comma-separated, or none",
                default: FetchCommand.defaultFailOn
            ) { command, value, name in
                command.failOn = try ValueParsers.failingStatuses(value, option: name)
            },
            OptionSpec("header", short: "H", .value("'NAME: VALUE'"), help: "extra request header, repeatable") {
                command, value, name in
                command.options.headers.append(try ValueParsers.header(value, option: name))
            },
            OptionSpec("user-agent", short: "A", .value("S"), help: "User-Agent header", default: defaults.userAgent) {
                command, value, name in
                command.options.userAgent = try ValueParsers.headerValue(value, option: name)
            },
            OptionSpec(
                "input-format", .value("FORMAT"),
                help: "how each FILE lists URLs: lines, csv, tsv or jsonl (default: by extension, .gz too)",
                choices: InputFormat.allCases.map(\.rawValue)
            ) { command, value, name in
                command.input.format = try ValueParsers.choice(value, option: name, of: InputFormat.self)
            },
            OptionSpec(
                "url-column", .value("NAME"), help: "the column (JSON Lines: the key) holding each row's URL",
                default: InputOptions().urlColumn
            ) { command, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a column name") }
                command.input.urlColumn = value
            },
            OptionSpec(
                // No default shown: a named column must exist, while `sha256` pins only when present.
                "sha256-column", .value("NAME"),
                help: "the column pinning each row's bytes to a SHA-256 (other bytes: hash-mismatch); "
                    + "without it, a column named \(InputOptions().sha256Column) if there is one"
            ) { command, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a column name") }
                command.input.sha256Column = value
                command.input.requiresSHA256Column = true
            },
            OptionSpec(
                "output", short: "o", .value("DIR"),
                help: "also place each image in DIR, named after its URL (one URL argument: a FILE, or - for "
                    + "standard output, as curl's -o)"
            ) {
                command, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a directory") }
                command.outputDirectory = value
            },
            OptionSpec(
                "name", .value("TEMPLATE"),
                help: "with -o, file names from {host} {path} {stem} {hash} {ext}",
                default: NameTemplate.standardText
            ) { command, value, name in
                command.nameTemplate = try NameTemplate(parsing: value, option: name)
            },
            OptionSpec(
                "shard", .value("K/N|auto"),
                help: "only URLs whose key hash falls in shard K of N (0-based); auto: the job runner's"
            ) {
                command, value, name in
                command.isShardAuto = value == "auto"
                command.shard = command.isShardAuto ? nil : try ValueParsers.shard(value, option: name)
            },
            OptionSpec("link", help: "with -o, hard-link files to the cache instead of reflinking or copying them") {
                command, _, _ in command.isLinking = true
            },
            OptionSpec("json", help: "results as JSON Lines on standard output") { command, _, _ in
                command.isJSON = true
            },
            OptionSpec(
                "summary", .value("FILE"), help: "also write the run's totals to FILE as one JSON object ('-': stderr)"
            ) {
                command, value, name in
                guard !value.isEmpty else { throw UsageError("option \(name) needs a file") }
                command.summaryFile = value
            },
            OptionSpec(
                "progress", .value("WHEN"), help: "progress bar on standard error: auto, always or never",
                default: FetchCommand().progress.rawValue, choices: ProgressMode.allCases.map(\.rawValue)
            ) {
                command, value, name in
                command.progress = try ValueParsers.choice(value, option: name, of: ProgressMode.self)
            },
        ] + resizeOptions + transportOptions + remoteOptions

    /// A FILE, `-`, or a URL: an absolute http or https URL is a URL to fetch, as curl, wget2
    /// and aria2c read it, even when a path spelt so exists (`./https:...` reads that file).
    /// URL arguments form one list, read where the first stood and reported as
    /// `arguments:N`.
    mutating func take(_ argument: String) throws(UsageError) {
        if URLArgument.isURL(argument) {
            if urlArguments.isEmpty { sources.append(.list(name: URLArgument.sourceName, [])) }
            urlArguments.append(argument)
            return
        }
        sources.append(argument == "-" ? .standardInput : .file(argument))
    }

    /// No FILE: a piped standard input is the list; a terminal there means the user forgot the list.
    mutating func validate(in environment: ProcessEnvironment) throws(UsageError) {
        if isShardAuto { shard = try ShardEnvironment.shard(from: environment.variables) }
        if !options.remoteCache.urls.isEmpty, let token = environment.variables[Self.remoteTokenVariable] {
            options.remoteCache.bearerToken = token.isEmpty ? nil : token
        }
        if resize.size > 0 && isLinking {
            throw UsageError("--link and --resize cannot be combined: a resized copy is a file of its own")
        }
        if let place = sources.firstIndex(of: .list(name: URLArgument.sourceName, [])) {
            sources[place] = .list(name: URLArgument.sourceName, urlArguments)
        }
        try resolveOutput()
        resize.format = try resolvedResizeFormat()
        if sources.isEmpty {
            guard !environment.isStandardInputTerminal else {
                throw UsageError("no input: give a FILE of URLs, or pipe the list on standard input", command: nil)
            }
            sources = [.standardInput]
        }
        // Last: opening may create the file, which no later usage error should leave behind.
        if let summaryFile { summaryTarget = try SummaryTarget.open(summaryFile, inputs: sources) }
    }
}
