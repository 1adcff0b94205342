import Glibc
import SDFetchCore

/// Renders one progress line from a ``RunProgress/Snapshot``, fitted to the terminal width.
///
/// Pure: the ticker supplies the snapshot, elapsed time and width, so the layout is tested
/// without a terminal. The line is laid out for 80 columns first (sdfetch(1) PROGRESS):
///
///     [=======>        ] 41%  412/1000  9 failed  3.2/~7.9 MiB  1.1 MiB/s  ETA 0:04
///
/// and a wider terminal adds, in this order, hosts down, the transfers in flight (under way
/// on a connection) and the URLs queued behind them, and the downloaded, cached, skipped and
/// invalid counts. When the line is too narrow, parts go least useful first: invalid,
/// skipped, cached, downloaded, queued and in flight, before the graphic shrinks below its
/// full size; then hosts down, the rate, the bytes, the failures and the percentage, while
/// it keeps 10 columns; never the count and the ETA. The graphic goes only when even those
/// need its room: a wrapped line could not be redrawn with `\r`.
///
/// What is drawn holds still: the fill never goes back (an estimate that grows its total
/// would take it back), the ETA moves smoothly (``smoothedETA``), and the graphic keeps its
/// width while the terminal does, only ever giving columns to numbers that grew.
struct ProgressBar {
    let terminal: Terminal
    /// Recent (time, bytes, done) samples for the rate and the ETA, newest last. Seeded with
    /// the run's start, so the first redraw after a completion already has a rate and an ETA.
    private var samples: [(at: Duration, bytes: Int64, done: Int)] = [(.zero, 0, 0)]
    /// When `done` last grew.
    private var lastDone: (at: Duration, done: Int) = (.zero, 0)
    /// How far back the rate looks, smoothing bursts without hiding a stall.
    private static let window = Duration.seconds(5)
    /// The largest fraction drawn so far: the fill and the percentage never fall below it.
    private var fractionDrawn = 0.0
    /// The ETA drawn last and when, for ``smoothedETA(_:elapsed:)``.
    private var etaDrawn: (at: Duration, seconds: Double)?
    /// The graphic's columns and the terminal width they were chosen for.
    private var graphicDrawn: (width: Int, columns: Int)?
    /// How quickly the drawn ETA follows the estimate: about two thirds of the way in this
    /// long, so one burst or pause moves it by a little, a lasting change fully.
    private static let etaLag = 3.0

    init(terminal: Terminal) {
        self.terminal = terminal
    }

    /// Notes `snapshot` at `elapsed` for the rates, then renders it: what the ticker calls.
    mutating func render(_ snapshot: RunProgress.Snapshot, elapsed: Duration, width: Int, hostsDown: Int = 0) -> String
    {
        sample(snapshot, elapsed: elapsed)
        return line(snapshot, elapsed: elapsed, width: width, hostsDown: hostsDown)
    }

    /// Adds a sample for the rates.
    mutating func sample(_ snapshot: RunProgress.Snapshot, elapsed: Duration) {
        samples.append((elapsed, snapshot.bytes, snapshot.done))
        while let first = samples.first, elapsed - first.at > Self.window, samples.count > 2 { samples.removeFirst() }
        if snapshot.done != lastDone.done { lastDone = (elapsed, snapshot.done) }
    }

    /// The line for `snapshot` at `elapsed`, at most `width - 1` columns, from the samples
    /// taken so far: a redraw between ticks (after result lines) shows fresh counts.
    mutating func line(_ snapshot: RunProgress.Snapshot, elapsed: Duration, width: Int, hostsDown: Int = 0) -> String {
        let oldest = samples[0]
        let span = max((elapsed - oldest.at).timeInterval, 0.001)
        let byteRate = Double(max(0, snapshot.bytes - oldest.bytes)) / span
        let urlRate = Double(max(0, snapshot.done - oldest.done)) / span
        let estimate = ProgressEstimate(
            snapshot, urlRate: urlRate, byteRate: byteRate,
            sinceLastDone: snapshot.done != lastDone.done ? .zero : elapsed - lastDone.at)

        var eta = "ETA --:--"
        if snapshot.isTotalKnown, let seconds = smoothedETA(estimate, elapsed: elapsed) {
            eta = "ETA " + HumanReadable.clock(seconds: seconds)
        }
        if snapshot.isTotalKnown { fractionDrawn = max(fractionDrawn, estimate.fraction) }
        let fraction = snapshot.isTotalKnown ? fractionDrawn : estimate.fraction
        let count = "\(snapshot.done)/\(snapshot.total)" + (snapshot.isTotalKnown ? "" : "+")
        let percent = snapshot.isTotalKnown ? "\(Int((fraction * 100).rounded(.down)))%" : nil
        // Under way on a connection; the rest of the URLs on the network wait for a lane,
        // a connection or a retry.
        let underWay = min(snapshot.inFlight, snapshot.awaitingResponses + snapshot.bodiesUnderWay)
        let queued = snapshot.inFlight - underWay
        // (text, colour, rank): shown in this order, dropped by rank, highest first.
        var parts: [Part] = [
            Part(percent, nil, rank: 3),
            Part(count, nil, rank: 0),
            Part(snapshot.failed > 0 ? "\(snapshot.failed) failed" : nil, .red, rank: 4),
            Part(Self.bytes(snapshot.bytes, of: estimate), nil, rank: 5),
            Part(HumanReadable.bytes(Int64(byteRate)) + "/s", nil, rank: 6),
            Part(eta, nil, rank: 0),
            Part(hostsDown > 0 ? "\(hostsDown) host\(hostsDown == 1 ? "" : "s") down" : nil, .red, rank: 7),
            Part(underWay > 0 ? "\(underWay) in flight" : nil, nil, rank: Self.optionalRank),
            Part(queued > 0 ? "\(queued) queued" : nil, nil, rank: 10),
            Part("\(snapshot.downloaded) downloaded", .green, rank: 11),
            Part(snapshot.cached > 0 ? "\(snapshot.cached) cached" : nil, .cyan, rank: 12),
            Part(snapshot.skipped > 0 ? "\(snapshot.skipped) skipped" : nil, .red, rank: 13),
            Part(snapshot.invalid > 0 ? "\(snapshot.invalid) invalid" : nil, .red, rank: 14),
        ].filter { !$0.text.isEmpty }
        let limit = max(10, width - 1)
        // The optional counts give way to a full-size graphic; the rest only to its 10 columns.
        let minimumGraphic = 10
        let preferredGraphic = max(minimumGraphic, min(30, width / 4))
        Self.drop(from: &parts, above: Self.optionalRank - 1, toFit: limit - preferredGraphic - 2)
        Self.drop(from: &parts, above: 0, toFit: limit - minimumGraphic - 2)
        var line = parts.map { part in part.colour.map { terminal.paint(part.text, $0) } ?? part.text }
            .joined(separator: "  ")
        // A fixed share of the width when there is room, else what is left, down to 10; and
        // never wider than it was at this terminal width, so it does not jitter as numbers
        // grow and shrink (a rate, an ETA).
        var graphicWidth = min(preferredGraphic, limit - Self.plainWidth(parts) - 2)
        if let drawn = graphicDrawn, drawn.width == width { graphicWidth = min(graphicWidth, drawn.columns) }
        if graphicWidth >= minimumGraphic {
            graphicDrawn = (width, graphicWidth)
            let graphic = Self.graphicBar(
                fraction: fraction, known: snapshot.isTotalKnown && snapshot.total > 0,
                width: graphicWidth - 2)
            line = "[" + graphic + "] " + line
        }
        return line
    }

    /// The ETA to draw: the estimate's, followed gradually. Between draws the one before
    /// counts down by the time gone; it then moves toward the new estimate by a share that
    /// grows with that time (``etaLag``). A lower bound the estimate knows for certain (the
    /// connects' timeouts) holds at once. Nil while the estimate has none.
    private mutating func smoothedETA(_ estimate: ProgressEstimate, elapsed: Duration) -> Double? {
        guard let target = estimate.secondsLeft else {
            etaDrawn = nil
            return nil
        }
        var seconds = target
        if let drawn = etaDrawn, elapsed > drawn.at {
            let gone = (elapsed - drawn.at).timeInterval
            let counted = max(0, drawn.seconds - gone)
            seconds = counted + (target - counted) * (1 - exp(-gone / Self.etaLag))
        } else if let drawn = etaDrawn {
            seconds = drawn.seconds  // a redraw at the same instant
        }
        seconds = max(seconds, estimate.certainSeconds ?? 0)
        etaDrawn = (elapsed, seconds)
        return seconds
    }

    /// `3.2 MiB`, or with the run's total: `3.2/~7.9 MiB` (`~`: partly estimated from the
    /// mean image so far), `812.0 KiB/7.9 MiB`.
    static func bytes(_ bytes: Int64, of estimate: ProgressEstimate) -> String {
        let done = HumanReadable.bytes(bytes)
        guard let total = estimate.totalBytes, total > 0 else { return done }
        let all = (estimate.isExact ? "" : "~") + HumanReadable.bytes(max(total, bytes))
        let (doneNumber, doneUnit) = split(done)
        let (_, allUnit) = split(all)
        return doneUnit == allUnit ? "\(doneNumber)/\(all)" : "\(done)/\(all)"
    }

    /// `3.2 MiB` as (`3.2`, `MiB`).
    private static func split(_ text: String) -> (Substring, Substring) {
        guard let space = text.lastIndex(of: " ") else { return (text[...], "") }
        return (text[..<space], text[text.index(after: space)...])
    }

    /// Ranks from here on are counts a wide terminal adds (in flight, downloaded, ...).
    private static let optionalRank = 9

    /// Removes parts ranked above `rank`, the highest rank first, until `parts` take at most
    /// `columns`.
    private static func drop(from parts: inout [Part], above rank: Int, toFit columns: Int) {
        while plainWidth(parts) > columns,
            let last = parts.indices.filter({ parts[$0].rank > rank }).max(by: { parts[$0].rank < parts[$1].rank })
        {
            parts.remove(at: last)
        }
    }

    /// One part of the line: nil text parts are left out.
    private struct Part {
        let text: String
        let colour: Terminal.Colour?
        /// 0: never dropped; else dropped before every part of a lower rank.
        let rank: Int

        init(_ text: String?, _ colour: Terminal.Colour?, rank: Int) {
            self.text = text ?? ""
            self.colour = colour
            self.rank = rank
        }
    }

    private static func plainWidth(_ parts: [Part]) -> Int {
        parts.reduce(0) { $0 + $1.text.count } + 2 * max(0, parts.count - 1)
    }

    private static func graphicBar(fraction: Double, known: Bool, width: Int) -> String {
        guard known else { return String(repeating: " ", count: width) }
        let filled = min(width, Int((Double(width) * fraction).rounded(.down)))
        let arrow = filled < width ? ">" : ""
        return String(repeating: "=", count: filled) + arrow
            + String(repeating: " ", count: width - filled - arrow.count)
    }
}

// MARK: - Ticker
