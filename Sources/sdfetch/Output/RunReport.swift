import FoundationEssentials
import SDFetchCore

/// The closing summary on standard error: counts per status, duplicates, bytes, seconds.
enum RunReport {
    /// `sdfetch: 12 URLs: 9 downloaded, 2 cached, 1 failed; 3 duplicates coalesced; 1.2 MiB in 0.8 s`;
    /// after Ctrl-C, `; 1487 URLs not reached` when the input's length is known (`notReached`).
    static func summary(
        _ summary: RunSummary, elapsed: Duration, interrupted: Bool, notReached: Int? = 0, remote: RemoteCounts? = nil,
        terminal: Terminal
    ) -> String {
        let total = FetchStatus.allCases.reduce(0) { $0 + summary.count($1) } + summary.interrupted
        var counts = FetchStatus.allCases.compactMap { status -> String? in
            let count = summary.count(status)
            guard count > 0 else { return nil }
            let text = "\(count) \(status.rawValue)"
            switch status {
            case .downloaded: return terminal.paint(text, .green)
            case .cached, .revalidated: return terminal.paint(text, .cyan)
            case .failed, .skipped, .invalid: return terminal.paint(text, .red)
            }
        }
        if summary.interrupted > 0 { counts.append("\(summary.interrupted) interrupted") }
        var line = "sdfetch: " + (interrupted ? "interrupted after " : "")
        line += total == 1 ? "1 URL" : "\(total) URLs"
        if !counts.isEmpty { line += ": " + counts.joined(separator: ", ") }
        line += "; \(summary.duplicates) duplicate\(summary.duplicates == 1 ? "" : "s") coalesced"
        line += "; \(HumanReadable.bytes(summary.receivedBytes)) downloaded in \(HumanReadable.seconds(elapsed)) s"
        if let remote {
            line += "; remote cache: \(remote.hits) hit\(remote.hits == 1 ? "" : "s"), \(remote.misses) missed, "
            line += "\(remote.uploads) uploaded, \(remote.errors) error\(remote.errors == 1 ? "" : "s")"
        }
        if let notReached, notReached > 0 { line += "; \(notReached) URL\(notReached == 1 ? "" : "s") not reached" }
        line += "\n"
        return line
    }
}
