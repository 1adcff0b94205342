import SDFetchCore

/// Renders one progress line from a ``RunProgress/Snapshot``, fitted to the terminal width.
///
/// Pure: the ticker supplies the snapshot, elapsed time and width, so the layout is tested
/// without a terminal. Parts are dropped from the least useful end when the line is too
/// narrow (the graphic bar shrinks first), so the line never wraps: a wrapped line
/// cannot be redrawn with `\r`.
struct ProgressBar {
    let terminal: Terminal
    /// Recent (time, bytes, done) samples for the rate and the ETA, newest last. Seeded with
    /// the run's start, so the first redraw after a completion already has a rate and an ETA.
    private var samples: [(at: Duration, bytes: Int64, done: Int)] = [(.zero, 0, 0)]
    /// How far back the rate looks, smoothing bursts without hiding a stall.
    private static let window = Duration.seconds(5)

    init(terminal: Terminal) {
        self.terminal = terminal
    }

    /// The line for `snapshot` at `elapsed` since the run started, at most `width - 1` columns;
    /// `hostsDown` hosts given up so far are counted after the failures.
    mutating func render(_ snapshot: RunProgress.Snapshot, elapsed: Duration, width: Int, hostsDown: Int = 0) -> String {
        samples.append((elapsed, snapshot.bytes, snapshot.done))
        while let first = samples.first, elapsed - first.at > Self.window, samples.count > 2 { samples.removeFirst() }
        let oldest = samples[0]
        let span = max((elapsed - oldest.at).timeInterval, 0.001)
        let byteRate = Double(snapshot.bytes - oldest.bytes) / span
        let urlRate = Double(snapshot.done - oldest.done) / span

        let total = "\(snapshot.done)/\(snapshot.total)" + (snapshot.isTotalKnown ? "" : "+")
        var eta = "ETA --:--"
        if snapshot.isTotalKnown,
            let seconds = Self.secondsLeft(snapshot, urlRate: urlRate, byteRate: byteRate)
        {
            eta = "ETA " + HumanReadable.clock(seconds: seconds)
        }
        // Plain text decides the layout; colour is added after fitting.
        var parts: [(text: String, colour: Terminal.Colour?)] = [
            (total, nil),
            ("\(snapshot.downloaded) downloaded", .green),
            ("\(snapshot.cached) cached", .cyan),
            ("\(snapshot.failed) failed", snapshot.failed > 0 ? .red : nil),
        ]
        if hostsDown > 0 { parts.append(("\(hostsDown) host\(hostsDown == 1 ? "" : "s") down", .red)) }
        parts += [
            (HumanReadable.bytes(snapshot.bytes), nil),
            (HumanReadable.bytes(Int64(byteRate)) + "/s", nil),
            (eta, nil),
        ]
        let limit = max(10, width - 1)
        var kept = parts
        while kept.count > 1, plainWidth(kept) > limit { kept.removeLast() }
        var line = kept.map { part in part.colour.map { terminal.paint(part.text, $0) } ?? part.text }
            .joined(separator: "  ")
        // A fixed share of the width, so the bar does not jitter as the numbers grow; dropped
        // whole when the text needs the room.
        let graphicWidth = min(30, width / 4)
        if graphicWidth >= 10, plainWidth(kept) + graphicWidth + 2 <= limit {
            let graphic = graphicBar(
                done: snapshot.done, total: snapshot.total, known: snapshot.isTotalKnown, width: graphicWidth - 2)
            line = "[" + graphic + "]  " + line
        }
        return line
    }

    /// The time left, from whichever rate has something to say: URLs done per second for
    /// the URLs left, and bytes per second for the declared bytes still to come of the
    /// transfers under way; the longer of the two, since both must pass. Before any URL is
    /// done (a few large or rate-limited images) only the bytes speak. Nil: no rate yet.
    static func secondsLeft(_ snapshot: RunProgress.Snapshot, urlRate: Double, byteRate: Double) -> Double? {
        var seconds: Double?
        if urlRate > 0 { seconds = Double(snapshot.total - snapshot.done) / urlRate }
        if byteRate > 0, snapshot.pendingBytes > 0 {
            seconds = max(seconds ?? 0, Double(snapshot.pendingBytes) / byteRate)
        }
        return seconds
    }

    private func plainWidth(_ parts: [(text: String, colour: Terminal.Colour?)]) -> Int {
        parts.reduce(0) { $0 + $1.text.count } + 2 * (parts.count - 1)
    }

    private func graphicBar(done: Int, total: Int, known: Bool, width: Int) -> String {
        guard total > 0 else { return String(repeating: " ", count: width) }
        let filled = min(width, width * done / total)
        let arrow = filled < width && known ? ">" : ""
        return String(repeating: "=", count: filled) + arrow
            + String(repeating: " ", count: width - filled - arrow.count)
    }
}

// MARK: - Ticker
