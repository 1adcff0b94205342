import SDFetchCore

/// `sdfetch stats`: entries, bytes, per-format counts, oldest and newest, failure records.
struct StatsCommand: ParsableCommand {
    static let name = "stats"
    static let usage = "stats [--json]"
    static let summary = "show what the cache holds"
    static let abstract = """
        Show the cache's entries, bytes, per-format counts, oldest and newest entry and the number \
        of failed-URL records. A cache directory that does not exist yet reports zeros.
        """
    static let options: [OptionSpec<StatsCommand>] = [
        OptionSpec("json", help: "print the statistics as one JSON object") { c, _, _ in c.isJSON = true }
    ]

    var cacheDirectory: String?
    var isJSON = false

    mutating func take(_ argument: String) throws(UsageError) {
        throw UsageError("stats takes no arguments, got '\(Escaping.terminal(argument))'", command: Self.name)
    }
}
