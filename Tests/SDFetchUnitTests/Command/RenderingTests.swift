import Foundation
import Testing

@testable import SDFetchCore
@testable import sdfetch

@Suite("rendering: escaping, JSON, output names, progress line")
struct RenderingTests {
    @Test("control characters are escaped for the terminal, plain URLs are untouched")
    func terminalEscaping() {
        #expect(Escaping.terminal("http://h/a\\b?c=1") == "http://h/a\\b?c=1")
        #expect(Escaping.terminal("a\u{1B}[2Jb\u{7}\t\n") == "a\\x1b[2Jb\\x07\\t\\n")
        #expect(Escaping.terminal("x\u{9B}y\u{202E}z") == "x\\u{009b}y\\u{202e}z")
        #expect(Escaping.terminal("héllo 画像") == "héllo 画像")
        // Invisible characters that make two URLs print alike, tag characters included.
        #expect(
            Escaping.terminal("http://h/a\u{200B}b\u{2060}c\u{FEFF}d\u{AD}e\u{E0041}.png")
                == "http://h/a\\u{200b}b\\u{2060}c\\u{feff}d\\u{00ad}e\\u{e0041}.png")
    }

    @Test(
        "invisible characters are escaped by Unicode's properties, not a list",
        arguments: [
            ("\u{FE0F}", "\\u{fe0f}"),  // variation selector: Default_Ignorable
            ("\u{E0100}", "\\u{e0100}"),  // supplementary variation selector
            ("\u{2800}", "\\u{2800}"),  // blank Braille pattern: prints as a space
            ("\u{200B}", "\\u{200b}"),  // zero-width space: Cf
            ("\u{2066}", "\\u{2066}"),  // left-to-right isolate: Cf, Bidi_Control
            ("\u{FEFF}", "\\u{feff}"),  // BOM: Cf
            ("\u{E0001}", "\\u{e0001}"),  // language tag: Cf
            ("\u{110BD}", "\\u{110bd}"),  // Kaithi number sign: Cf, not default-ignorable
            ("\u{1D173}", "\\u{1d173}"),  // musical symbol begin beam: Cf
            ("\u{180B}", "\\u{180b}"),  // Mongolian free variation selector
        ])
    func invisibleScalars(scalar: String, escaped: String) throws {
        #expect(Escaping.terminal("http://h/a\(scalar)b") == "http://h/a\(escaped)b")
        let json = Escaping.json("a\(scalar)b")
        #expect(json.unicodeScalars.allSatisfy { $0.isASCII }, "\(json)")
        #expect(try JSONSerialization.jsonObject(with: Data("[\(json)]".utf8)) as? [String] == ["a\(scalar)b"])
    }

    @Test("visible text keeps its characters: accents, CJK, emoji, a no-break space")
    func visibleScalars() {
        for text in ["héllo", "画像", "😀", "a\u{A0}b", "Ω≈ç√"] { #expect(Escaping.terminal(text) == text) }
    }

    @Test("a clock reads any time: minutes, hours, capped, and 0:00 for no number instead of a trap")
    func clockOfAnyTime() {
        #expect(HumanReadable.clock(seconds: 6.2) == "0:07")
        #expect(HumanReadable.clock(seconds: 3723) == "1:02:03")
        #expect(HumanReadable.clock(seconds: 1e12) == "99:59:59")
        #expect(HumanReadable.clock(seconds: .nan) == "0:00")
        #expect(HumanReadable.clock(seconds: .infinity) == "99:59:59")
        #expect(HumanReadable.clock(seconds: -.infinity) == "0:00")
        #expect(HumanReadable.clock(seconds: -3) == "0:00")
    }

    @Test("a text result line is status, path and URL, tab-separated, password masked, escaped")
    func textLine() throws {
        let key = try URLKey(parsing: "http://u:secret@h/x.png")
        let result = FetchResult(url: "http://u:secret@h/x.png", key: key, status: .cached)
        #expect(
            ResultPrinter.textLine(result, path: "out/x\u{1B}.png") == "cached\tout/x\\x1b.png\thttp://u:***@h/x.png\n")
        #expect(ResultPrinter.textLine(result, path: nil) == "cached\t-\thttp://u:***@h/x.png\n")
    }

    @Test("JSON strings escape quotes, backslashes and every unsafe character, and decode back")
    func jsonEscaping() throws {
        let original = "q\"b\\s\u{0}e\u{1B}c\u{9B}r\u{202E}é\u{200B}t\u{E0041}"
        let text = Escaping.json(original)
        #expect(!text.unicodeScalars.contains { Escaping.isUnsafe($0) })
        let decoded = try JSONSerialization.jsonObject(with: Data("[\(text)]".utf8)) as? [String]
        #expect(decoded == [original])
    }

    @Test("output names come from the last segment, made safe, with a key hash and the sniffed extension")
    func outputNames() throws {
        func name(_ url: String, _ format: ImageFormat? = .png) throws -> String {
            OutputNamer.name(for: try URLKey(parsing: url), format: format)
        }
        let ax = try name("http://h/a/x.png")
        let bx = try name("http://h/b/x.png")
        #expect(ax.hasPrefix("x-") && ax.hasSuffix(".png") && ax.utf8.count == "x-12345678.png".utf8.count)
        #expect(ax == "x-" + (try URLKey(parsing: "http://h/a/x.png")).digest.hex.prefix(8) + ".png")
        #expect(ax != bx)
        #expect(try name("http://h/a/x.png") == ax)
        #expect(try name("http://h/photo.JPEG?size=2", .jpeg).hasPrefix("photo-"))
        #expect(try name("http://h/photo.JPEG?size=2", .jpeg).hasSuffix(".jpg"))
        #expect(try name("http://h/..").hasPrefix("image-"))
        #expect(try name("http://h/%2e%2e").hasPrefix("image-"))
        #expect(try name("http://h/").hasPrefix("image-"))
        #expect(try name("http://h/.hidden.png").hasPrefix("hidden-"))
        #expect(try name("http://h/a%2f..%2fb.png").hasPrefix("a_.._b-"))
        #expect(try name("http://h/a%00%1bb.gif", .gif).hasPrefix("a__b-"))
        #expect(try name("http://h/x.tar.gz.PNG").hasPrefix("x.tar.gz-"))
        #expect(try name("http://h/a~b+c=d.webp", .webp).hasPrefix("a~b+c=d-"))
        let longASCII = try name("http://h/" + String(repeating: "a", count: 250) + ".png")
        #expect(longASCII.utf8.count == 200 && longASCII.hasPrefix("aaa") && longASCII.hasSuffix(".png"))
        let long = try name("http://h/" + String(repeating: "é", count: 300) + ".png")
        #expect(long.utf8.count <= 200 && long.hasSuffix(".png"))
        for sample in [ax, bx, long] { #expect(!sample.contains("/") && !sample.hasPrefix(".")) }
    }

    @Test("the progress line shows counts, bytes, rate and ETA and fits the width")
    func progressLine() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 10, done: 0, downloaded: 0, cached: 0, failed: 0, bytes: 0, pendingBytes: 0, isTotalKnown: true)
        _ = bar.render(snapshot, elapsed: .zero, width: 120)
        snapshot.done = 5
        snapshot.downloaded = 3
        snapshot.cached = 1
        snapshot.failed = 1
        snapshot.bytes = 3 << 20
        let wide = bar.render(snapshot, elapsed: .seconds(1), width: 120)
        #expect(wide.contains("5/10") && wide.contains("3 downloaded") && wide.contains("1 cached"), "\(wide)")
        #expect(
            wide.contains("1 failed") && wide.contains("3.0 MiB") && wide.contains("/s") && wide.contains("ETA 0:01"))
        #expect(wide.hasPrefix("[") && wide.contains("] 50%  5/10"), "\(wide)")
        for width in [20, 40, 60, 80] {
            #expect(bar.render(snapshot, elapsed: .seconds(1), width: width).count < width)
        }
        #expect(!wide.contains("host"))
        #expect(bar.render(snapshot, elapsed: .seconds(1), width: 160, hostsDown: 3).contains("3 hosts down"))
        #expect(bar.render(snapshot, elapsed: .seconds(1), width: 160, hostsDown: 1).contains("1 host down"))
    }

    @Test("at 80 columns the graphic, count, failures, bytes, rate and ETA stay; hosts down never push the graphic out")
    func progressAt80Columns() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 10_000, done: 0, downloaded: 0, cached: 0, failed: 0, bytes: 0, pendingBytes: 0, isTotalKnown: true)
        _ = bar.render(snapshot, elapsed: .zero, width: 80)
        snapshot.done = 9_662
        snapshot.downloaded = 8_987
        snapshot.cached = 120
        snapshot.failed = 511
        snapshot.skipped = 40
        snapshot.invalid = 4
        snapshot.inFlight = 256
        snapshot.bytes = 1_200 << 20
        bar.sample(snapshot, elapsed: .seconds(10))
        for width in [80, 120] {
            let line = bar.line(snapshot, elapsed: .seconds(10), width: width, hostsDown: 57)
            #expect(line.count < width, "\(line)")
            #expect(line.hasPrefix("["), "\(width): \(line)")
            for part in ["9662/10000", "511 failed", "MiB/s", "ETA "] {
                #expect(line.contains(part), "\(width): \(line)")
            }
            if width == 120 {
                // Hosts down joins the line, and the graphic keeps its full 30 columns.
                #expect(
                    line.contains("57 hosts down")
                        && line.firstIndex(of: "]") == line.index(line.startIndex, offsetBy: 29), "\(line)")
            }
        }
        snapshot.awaitingResponses = 2
        snapshot.bodiesUnderWay = 4
        let wide = bar.line(snapshot, elapsed: .seconds(10), width: 200, hostsDown: 57)
        #expect(wide.contains("6 in flight  250 queued"), "\(wide)")
    }

    /// A bar on a terminal that always draws one, and a snapshot of a known `total` of which
    /// `done` were downloaded, bringing `bytes`.
    private static func bar(total: Int, done: Int = 0, bytes: Int64 = 0) -> (ProgressBar, RunProgress.Snapshot) {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        let snapshot = RunProgress.Snapshot(
            total: total, done: done, downloaded: done, cached: 0, failed: 0, bytes: bytes, pendingBytes: 0,
            isTotalKnown: true)
        return (ProgressBar(terminal: terminal), snapshot)
    }

    @Test("in flight counts transfers under way on a connection; URLs waiting for a lane are queued")
    func inFlightIsUnderWay() {
        var (bar, snapshot) = Self.bar(total: 100, done: 10, bytes: 1 << 20)
        snapshot.inFlight = 41
        snapshot.awaitingResponses = 2
        snapshot.bodiesUnderWay = 4
        let line = bar.render(snapshot, elapsed: .seconds(1), width: 160)
        #expect(line.contains("6 in flight") && line.contains("35 queued") && !line.contains("41"), "\(line)")
        snapshot.inFlight = 6
        #expect(!bar.render(snapshot, elapsed: .seconds(2), width: 160).contains("queued"))
    }

    @Test("the fill and the percentage never fall, even when the estimated total grows")
    func fractionNeverFalls() {
        var (bar, snapshot) = Self.bar(total: 10, done: 2, bytes: 2 << 20)
        snapshot.lookedUp = 10
        snapshot.networkStarted = 10
        snapshot.bodies = 2
        snapshot.bodyBytes = 2 << 20
        let before = bar.render(snapshot, elapsed: .seconds(1), width: 120)
        #expect(before.contains("] 20%"), "\(before)")
        // A huge body is announced: by bytes the run is now less far along than it was.
        snapshot.bodies = 3
        snapshot.bodyBytes = 12 << 20
        snapshot.bodiesUnderWay = 1
        snapshot.pendingBytes = 10 << 20
        snapshot.inFlight = 1
        let after = bar.render(snapshot, elapsed: .seconds(2), width: 120)
        #expect(after.contains("] 20%"), "\(after)")
        #expect(before.prefix { $0 != "]" } == after.prefix { $0 != "]" }, "the fill holds:\n\(before)\n\(after)")
    }

    @Test("the ETA follows a jump in the estimate gradually, and counts down between draws")
    func etaIsSmoothed() throws {
        var (bar, snapshot) = Self.bar(total: 100)
        _ = bar.render(snapshot, elapsed: .zero, width: 120)
        snapshot.done = 50
        snapshot.downloaded = 50
        #expect(bar.render(snapshot, elapsed: .seconds(5), width: 120).contains("ETA 0:05"))
        // The next second brings 5 more: at 5 a second the raw estimate is 0:09 for the 45 left.
        snapshot.done = 55
        snapshot.downloaded = 55
        let line = bar.render(snapshot, elapsed: .seconds(6), width: 120)
        let eta = try #require(line.range(of: "ETA 0:0")).upperBound
        let seconds = try #require(Int(String(line[eta])))
        #expect((5...7).contains(seconds), "moves from 0:04 toward 0:09 by a part, not at once: \(line)")
    }

    @Test("the graphic keeps its width as the numbers beside it grow and shrink")
    func steadyGraphic() {
        var (bar, snapshot) = Self.bar(total: 100_000)
        var widths: [Int] = []
        for step in 1...8 {
            snapshot.done = step * 9_000
            snapshot.downloaded = snapshot.done
            snapshot.failed = step % 2 == 0 ? 0 : step * 1_111
            snapshot.bytes = Int64(step % 3 == 0 ? 900 : 90_000_000) * Int64(step)
            let line = bar.render(snapshot, elapsed: .seconds(step), width: 80)
            #expect(line.count < 80, "\(line)")
            widths.append(line.distance(from: line.startIndex, to: line.firstIndex(of: "]") ?? line.startIndex))
        }
        // It may give columns to numbers that grew, never take them back and forth.
        #expect(zip(widths, widths.dropFirst()).allSatisfy { $0 >= $1 }, "\(widths)")
        #expect(Set(widths).count <= 2, "\(widths)")
    }

    @Test("failed counts failures only: invalid lines and skipped URLs are counted apart")
    func failedExcludesInvalid() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 4, done: 3, downloaded: 1, cached: 0, failed: 0, bytes: 0, pendingBytes: 0, isTotalKnown: true)
        snapshot.invalid = 2
        let line = bar.render(snapshot, elapsed: .seconds(1), width: 160)
        #expect(!line.contains("failed") && line.contains("2 invalid"), "\(line)")
    }

    @Test("before any URL is done, the ETA counts the queued URLs by the mean image so far, and the byte total shows")
    func progressFromBytes() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 14, done: 0, downloaded: 0, cached: 0, failed: 0, bytes: 0, pendingBytes: 6 << 20,
            isTotalKnown: true)
        snapshot.lookedUp = 14
        snapshot.networkStarted = 14
        snapshot.inFlight = 6
        snapshot.bodies = 6
        snapshot.bodyBytes = 6 << 20
        snapshot.bodiesUnderWay = 6
        #expect(bar.render(snapshot, elapsed: .zero, width: 120).contains("ETA --:--"))
        // 1 MiB in 2 s; 5 MiB declared to come, and 8 queued URLs of 1 MiB each: 13 MiB at 512 KiB/s.
        snapshot.bytes = 1 << 20
        snapshot.pendingBytes = 5 << 20
        let line = bar.render(snapshot, elapsed: .seconds(2), width: 120)
        #expect(line.contains("0/14") && line.contains("1.0/~14.0 MiB") && line.contains("512.0 KiB/s"), "\(line)")
        #expect(line.contains("ETA 0:26"), "\(line)")
        #expect(line.contains("] 7%  0/14"), "\(line)")
        #expect(line.contains("6 in flight"), "\(line)")
    }

    @Test("when only unanswered connects are left and nothing finishes, the ETA runs to their timeout")
    func etaWaitsForConnects() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 100, done: 0, downloaded: 0, cached: 0, failed: 0, bytes: 0, pendingBytes: 0, isTotalKnown: true)
        _ = bar.render(snapshot, elapsed: .zero, width: 120)
        snapshot.done = 98
        snapshot.downloaded = 98
        _ = bar.render(snapshot, elapsed: .seconds(1), width: 120)
        snapshot.inFlight = 2
        snapshot.awaitingResponses = 2
        snapshot.longestWait = .seconds(12)
        // At once after the last completion the URL rate speaks; two seconds on, the connects do.
        #expect(bar.render(snapshot, elapsed: .milliseconds(1500), width: 120).contains("ETA 0:01"))
        #expect(bar.render(snapshot, elapsed: .seconds(3), width: 120).contains("ETA 0:12"))
    }

    @Test("a terminal shows a bar only where the spec allows one")
    func barDecision() {
        var tty = ProcessEnvironment.detached(["TERM": "xterm"])
        tty.isStandardErrorTerminal = true
        #expect(Terminal(environment: tty, progress: .auto, quiet: false).showsBar)
        #expect(Terminal(environment: tty, progress: .auto, quiet: false).usesColour)
        #expect(!Terminal(environment: tty, progress: .auto, quiet: true).showsBar)
        #expect(!Terminal(environment: tty, progress: .never, quiet: false).showsBar)
        #expect(!Terminal(environment: .detached(), progress: .auto, quiet: false).showsBar)
        #expect(Terminal(environment: .detached(), progress: .always, quiet: false).showsBar)
        var dumb = tty
        dumb.variables["TERM"] = "dumb"
        #expect(!Terminal(environment: dumb, progress: .auto, quiet: false).showsBar)
        #expect(!Terminal(environment: dumb, progress: .auto, quiet: false).usesColour)
        var noColour = tty
        noColour.variables["NO_COLOR"] = "1"
        #expect(!Terminal(environment: noColour, progress: .auto, quiet: false).usesColour)
    }

    @Test("held JSON lines come back in order with their final duplicates count")
    func heldJSONLines() async throws {
        let a = try URLKey(parsing: "http://h/a").digest
        let b = try URLKey(parsing: "http://h/b").digest
        let held = HeldJSONLines()
        held.hold("{\"url\":\"x,\\\"duplicates\\\":0\",\"duplicates\":0,\"ms\":1}\n", digest: a)
        held.hold("{\"url\":\"y\",\"duplicates\":0,\"ms\":2}\n", digest: b)
        held.hold("{\"url\":\"z\",\"duplicates\":0,\"ms\":3}\n", digest: nil)
        var out: [String] = []
        await held.release(duplicates: [a: 12, b: 0], waiting: WaitingRows()) { out.append($0) }
        #expect(
            out == [
                "{\"url\":\"x,\\\"duplicates\\\":0\",\"duplicates\":12,\"ms\":1}\n",
                "{\"url\":\"y\",\"duplicates\":0,\"ms\":2}\n",
                "{\"url\":\"z\",\"duplicates\":0,\"ms\":3}\n",
            ])
    }

    @Test("rows waiting for their key's line: in memory up to the budget, the rest spilled and written at the end")
    func waitingRowsSpill() async throws {
        let a = try URLKey(parsing: "http://h/a").digest
        let b = try URLKey(parsing: "http://h/b").digest
        let waiting = WaitingRows()
        let caption = String(repeating: "c", count: 1000)
        let rows = WaitingRows.memoryBudget / 1000 * 2
        for index in 0..<rows { waiting.add(",\"source\":\"l:\(index)\",\"f\":\"\(caption)\"}\n", digest: a) }
        waiting.add(",\"source\":\"l:b\"}\n", digest: b)
        #expect(waiting.memoryBytes <= WaitingRows.memoryBudget)

        let line = "{\"url\":\"http://h/a\",\"duplicates\":0,\"source\":\"l:0\"}\n"
        let first = waiting.lines(after: line, digest: a)
        #expect(first.count > 1000 && first.count < rows)
        #expect(first.allSatisfy { $0.hasPrefix("{\"url\":\"http://h/a\",\"duplicates\":0,\"source\":\"l:") })
        var rest: [String] = []
        await waiting.finish { rest.append($0) }
        // b's line never came: its row is not written.
        #expect(first.count + rest.count == rows)
        #expect(
            rest.last == "{\"url\":\"http://h/a\",\"duplicates\":0,\"source\":\"l:\(rows - 1)\",\"f\":\"\(caption)\"}\n"
        )
    }
}
