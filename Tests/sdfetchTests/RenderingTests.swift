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

    @Test("a text result line is status, path and URL, tab-separated, password masked, escaped")
    func textLine() throws {
        let key = try URLKey(parsing: "http://u:secret@h/x.png")
        let result = FetchResult(url: "http://u:secret@h/x.png", key: key, status: .cached)
        #expect(ResultPrinter.textLine(result, path: "out/x\u{1B}.png") == "cached\tout/x\\x1b.png\thttp://u:***@h/x.png\n")
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
        #expect(wide.contains("5/10") && wide.contains("3 downloaded") && wide.contains("1 cached"))
        #expect(wide.contains("1 failed") && wide.contains("3.0 MiB") && wide.contains("/s") && wide.contains("ETA 0:01"))
        #expect(wide.hasPrefix("["))
        for width in [20, 40, 60, 80] {
            #expect(bar.render(snapshot, elapsed: .seconds(1), width: width).count < width)
        }
        #expect(!wide.contains("host"))
        let withDown = bar.render(snapshot, elapsed: .seconds(1), width: 160, hostsDown: 3)
        #expect(withDown.contains("1 failed  3 hosts down  3.0 MiB"))
        #expect(bar.render(snapshot, elapsed: .seconds(1), width: 160, hostsDown: 1).contains("1 host down"))
    }

    @Test("before any URL is done, bytes arriving give a rate and an ETA from the bytes still to come")
    func progressFromBytes() {
        let terminal = Terminal(environment: .detached(), progress: .always, quiet: false)
        var bar = ProgressBar(terminal: terminal)
        var snapshot = RunProgress.Snapshot(
            total: 8, done: 0, downloaded: 0, cached: 0, failed: 0, bytes: 0, pendingBytes: 8 << 20,
            isTotalKnown: true)
        #expect(bar.render(snapshot, elapsed: .zero, width: 120).contains("ETA --:--"))
        // 1 MiB in 2 s of 8 MiB declared: 7 MiB to come at 512 KiB/s is 14 s.
        snapshot.bytes = 1 << 20
        snapshot.pendingBytes = 7 << 20
        let line = bar.render(snapshot, elapsed: .seconds(2), width: 120)
        #expect(line.contains("0/8") && line.contains("1.0 MiB") && line.contains("512.0 KiB/s"), "\(line)")
        #expect(line.contains("ETA 0:14"), "\(line)")
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
        #expect(out == [
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
        #expect(rest.last == "{\"url\":\"http://h/a\",\"duplicates\":0,\"source\":\"l:\(rows - 1)\",\"f\":\"\(caption)\"}\n")
    }
}
