/// How an input source lists its URLs (sdfetch(1) `--input-format`).
public enum InputFormat: String, Sendable, CaseIterable {
    /// One URL per line; blank lines and `#` comments ignored.
    case lines
    /// RFC 4180 comma-separated values with a header row.
    case csv
    /// Tab-separated values with a header row: a field is everything between two tabs
    /// (the IANA `text/tab-separated-values` rule: no quoting, so every line is a row).
    case tsv
    /// One JSON object per line (JSON Lines, NDJSON).
    case jsonl

    /// Whether rows have named columns (``RowFields``) rather than being bare URLs.
    public var isTabular: Bool { self != .lines }

    /// The format a file's name implies: `.csv`, `.tsv`, `.jsonl` and `.ndjson`, each also
    /// with `.gz`; anything else (standard input included) is `lines`.
    public static func implied(byName name: String) -> InputFormat {
        var name = name.lowercased()
        if name.hasSuffix(".gz") { name.removeLast(3) }
        if name.hasSuffix(".csv") { return .csv }
        if name.hasSuffix(".tsv") { return .tsv }
        if name.hasSuffix(".jsonl") || name.hasSuffix(".ndjson") { return .jsonl }
        return .lines
    }

    /// Whether a file of this name is read through gzip (`.gz`, whatever the format).
    public static func isGzipped(name: String) -> Bool {
        name.lowercased().hasSuffix(".gz")
    }
}
