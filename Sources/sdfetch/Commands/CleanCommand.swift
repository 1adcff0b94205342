import SDFetchCore

/// `sdfetch clean`: drop expired entries, expired failure records and stray temporary files, then trim to size.
struct CleanCommand: ParsableCommand {
    static let name = "clean"
    static let usage = "clean [--max-age DUR] [--max-size SIZE] [--dry-run] [--json]"
    static let summary = "remove expired entries and trim the cache"
    static let abstract = """
        Remove expired cache entries, expired failed-URL records and stray temporary files, then \
        trim the cache to --max-size, least recently used first. Safe while fetches run.
        """
    static let options: [OptionSpec<CleanCommand>] = [
        OptionSpec("max-age", .value("DUR"), help: "entries and records older than this expire (default 7d)") { c, v, n in
            c.maxAge = try ValueParsers.duration(v, option: n)
        },
        OptionSpec("max-size", .value("SIZE"), help: "then trim the cache to this size, K/M/G (default: no trim)") { c, v, n in
            c.maxSize = try ValueParsers.size(v, option: n)
        },
        OptionSpec("dry-run", help: "only list what would be removed") { c, _, _ in c.isDryRun = true },
        OptionSpec("json", help: "print the report as one JSON object") { c, _, _ in c.isJSON = true },
    ]

    var cacheDirectory: String?
    var maxAge: Duration = FetchOptions().maxAge
    var maxSize: Int64?
    var isDryRun = false
    var isJSON = false

    mutating func take(_ argument: String) throws(UsageError) {
        throw UsageError("clean takes no arguments, got '\(Escaping.terminal(argument))'", command: Self.name)
    }
}
