import SDFetchCore

/// `-v` with `--key-ignore-query`: the patterns no URL of the run had a parameter for,
/// named after the run. Such a pattern leaves every key as it was, so a signed URL's cache
/// never warms, and nothing else would say so (a pattern with a typo, or a config line
/// whose comment became part of the glob).
struct UnmatchedKeyPatterns {
    private let filter: KeyQueryFilter
    /// Patterns not matched yet, in the order given.
    private(set) var remaining: [String]

    init(_ filter: KeyQueryFilter) {
        self.filter = filter
        remaining = filter.patterns
    }

    /// Crosses off the patterns `result`'s request matches.
    mutating func note(_ result: FetchResult) {
        guard !remaining.isEmpty else { return }
        let matched = filter.patterns(matchingQueryOf: result.key?.request ?? result.url)
        if !matched.isEmpty { remaining.removeAll(where: matched.contains) }
    }

    /// One line per pattern left, for standard error.
    var text: String {
        remaining.map { pattern in
            "sdfetch: --key-ignore-query '\(Escaping.terminal(pattern))' matched no query parameter in this run\n"
        }.joined()
    }
}
