import SDFetchCore

/// The closing summary on standard error: counts per status, duplicates, bytes, seconds.
enum RunReport {
    /// `sdfetch: 12 URLs: 9 downloaded, 2 cached, 1 failed; 3 duplicates coalesced; 1.2 MiB in 0.8 s`;
    /// after Ctrl-C, `; 1487 URLs not reached` when the input's length is known (`notReached`).
    /// The words are the library's (``RunSummary/line(elapsed:notReached:paint:)``); the
    /// colours are the terminal's.
    static func summary(
        _ summary: RunSummary, elapsed: Duration, interrupted: Bool, notReached: Int? = 0, remote: RemoteCounts? = nil,
        terminal: Terminal
    ) -> String {
        var summary = summary
        summary.wasInterrupted = interrupted
        let line = summary.line(elapsed: elapsed, notReached: notReached) { text, status in
            switch status {
            case .downloaded: terminal.paint(text, .green)
            case .cached, .revalidated: terminal.paint(text, .cyan)
            case .failed, .skipped, .invalid: terminal.paint(text, .red)
            }
        }
        var text = "sdfetch: " + line
        if let remote {
            text += "; remote cache: \(remote.hits) hit\(remote.hits == 1 ? "" : "s"), \(remote.misses) missed, "
            text += "\(remote.uploads) uploaded, \(remote.errors) error\(remote.errors == 1 ? "" : "s")"
        }
        return text + "\n"
    }
}
