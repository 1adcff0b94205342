/// Failure lines held back while a progress bar is shown, listed once it is gone.
///
/// A redrawn bar would scatter them (README, "Quick start": listed after the bar, at most
/// 20 and then a count). Beyond the limit only a count is kept, so a run with a million
/// failures holds twenty lines.
struct FailureList {
    static let limit = 20
    private(set) var lines: [String] = []
    /// Failures past ``limit``.
    private(set) var notShown = 0

    mutating func add(_ line: String) {
        if lines.count < Self.limit { lines.append(line) } else { notShown += 1 }
    }

    /// The held lines, then where to find the rest; empty when nothing failed.
    var text: String {
        guard notShown > 0 else { return lines.joined() }
        return lines.joined()
            + "sdfetch: \(notShown) more not shown: 'sdfetch failed list' lists the permanent ones;"
            + " run with --json for every result\n"
    }
}
