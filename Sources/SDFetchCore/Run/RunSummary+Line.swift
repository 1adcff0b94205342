/// The command's closing line, for any caller: `12 URLs: 9 downloaded, 2 cached, 1 failed;
/// 3 duplicates coalesced; 1.2 MiB downloaded in 0.8 s`. `sdfetch` prints it after
/// `sdfetch: `, with the counts coloured on a terminal (`paint`).
extension RunSummary: CustomStringConvertible {
    /// The line without the time, which a summary does not hold: `"\(summary)"` in a caller's text.
    public var description: String { line() }

    /// The command's summary line, without its `sdfetch: ` and newline.
    ///
    /// - Parameters:
    ///   - elapsed: the run's time, shown as `in 0.8 s`; nil leaves it out.
    ///   - notReached: after an interruption, the input's URLs the run never reached
    ///     (``RunProgress/linesNotReached(reported:)``); shown when more than 0.
    ///   - paint: wraps each status count's text (`9 downloaded`), e.g. in a colour.
    public func line(
        elapsed: Duration? = nil, notReached: Int? = nil,
        paint: (String, FetchStatus) -> String = { text, _ in text }
    ) -> String {
        let total = FetchStatus.allCases.reduce(0) { $0 + count($1) } + interrupted
        var counts = FetchStatus.allCases.compactMap { status -> String? in
            count(status) > 0 ? paint("\(count(status)) \(status.rawValue)", status) : nil
        }
        if interrupted > 0 { counts.append("\(interrupted) interrupted") }
        var line = (wasInterrupted ? "interrupted after " : "") + (total == 1 ? "1 URL" : "\(total) URLs")
        if !counts.isEmpty { line += ": " + counts.joined(separator: ", ") }
        // One URL coalesces nothing: the count would be noise on every curl-style run.
        if total > 1 || duplicates > 0 {
            line += "; \(duplicates) duplicate\(duplicates == 1 ? "" : "s") coalesced"
        }
        line += "; \(ByteCountText.render(receivedBytes)) downloaded"
        if let elapsed { line += " in " + DecimalText.fixed(elapsed.timeInterval, places: 1) + " s" }
        if let notReached, notReached > 0 { line += "; \(notReached) URL\(notReached == 1 ? "" : "s") not reached" }
        return line
    }
}
