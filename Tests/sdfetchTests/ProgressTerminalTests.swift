import Foundation
import SDFetchTestSupport
import Testing

/// The progress bar on a real pseudo-terminal: redrawn with `\r`, showing counts, cleared before the summary.
@Suite("progress bar on a terminal", .cleansUp, .timeLimit(.minutes(1)))
struct ProgressTerminalTests {
    let directory = TemporaryDirectory("pty")

    /// Runs the built sdfetch with `--cache-dir` and `arguments`, standard error on a new
    /// pseudo-terminal of `columns` and `environment` (plus `HOME`), and captures what the
    /// terminal shows for at most `seconds`.
    private func onTerminal(
        _ arguments: [String], columns: UInt16 = 80, environment: [String: String], seconds: Int
    ) async throws -> (Process, [UInt8]) {
        let terminal = try PseudoTerminal(columns: columns)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache")] + arguments
        process.environment = ChildEnvironment.with(environment.merging(["HOME": directory.path]) { $1 })
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = terminal.slaveHandle
        try process.run()
        terminal.closeSlave()
        let bytes = await terminal.captureInBackground(until: .now + .seconds(seconds))
        await process.exited()
        return (process, bytes)
    }

    /// ``onTerminal(_:columns:environment:seconds:)``, the capture as text.
    private func onTerminalText(
        _ arguments: [String], columns: UInt16 = 80, environment: [String: String], seconds: Int
    ) async throws -> (Process, String) {
        let (process, bytes) = try await onTerminal(
            arguments, columns: columns, environment: environment, seconds: seconds)
        return (process, String(decoding: bytes, as: UTF8.self))
    }

    @Test("under --progress auto a terminal on stderr gets a redrawn bar with counts, then the summary")
    func redrawnBar() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<12).map { "/slow\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(
                path, ScriptedResponse(status: 200, body: SampleImages.png(seed: index), delay: .milliseconds(150)))
        }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let (process, bytes) = try await onTerminal(
            ["--progress", "auto", "-j", "2", list], columns: 100, environment: ["TERM": "xterm", "NO_COLOR": "1"],
            seconds: 30)
        let text = String(decoding: bytes, as: UTF8.self)
        let attachment = directory.path + ".capture"
        try? Data(bytes).write(to: URL(fileURLWithPath: attachment))

        #expect(process.terminationStatus == 0)
        let redraws = text.components(separatedBy: "\r").dropFirst().filter { !$0.hasPrefix("\u{1B}[K") }
        #expect(redraws.count >= 4, "expected several redraws, got: \(text.debugDescription)")
        // A count that is still 0 (cached, on this cold run) is left out to keep the line short.
        #expect(redraws.contains { $0.contains("downloaded") && $0.contains("/12") && $0.contains("ETA") })
        #expect(redraws.contains { $0.contains("12/12") } || text.contains("12 downloaded"))
        #expect(redraws.allSatisfy { line in (line.components(separatedBy: "\u{1B}[K").first ?? line).count < 100 })
        #expect(text.contains("\r\u{1B}[Ksdfetch: 12 URLs: 12 downloaded"))
        #expect(!text.contains("\u{1B}[3"), "NO_COLOR must keep colour off")
    }

    @Test("-o -'s result line shares the bar's terminal: the bar is erased before it and drawn again below it")
    func resultLineUnderBar() async throws {
        let server = try await LoopbackServer()
        server.route("/slow.png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(1500)))
        let (process, text) = try await onTerminalText(
            ["--progress", "always", server.url("/slow.png"), "-o", "-"],
            environment: ["TERM": "xterm", "NO_COLOR": "1"], seconds: 30)
        #expect(process.terminationStatus == 0, "\(text.debugDescription)")
        #expect(text.contains("/1"), "the bar was drawn: \(text.debugDescription)")
        // Erased before the line, and drawn again below it when the line came (not at the end).
        let line = "\r\u{1B}[Kdownloaded\t-\t\(server.url("/slow.png"))\n\r["
        #expect(text.contains(line), "\(text.debugDescription)")
        let result = try #require(text.range(of: "downloaded\t-\t"))
        let summary = try #require(text.range(of: "sdfetch: 1 URL"), "\(text.debugDescription)")
        #expect(result.lowerBound < summary.lowerBound, "\(text.debugDescription)")
    }

    @Test("under --limit-rate the bar counts bytes as they arrive, before the first image is done")
    func bytesBeforeFirstImage() async throws {
        let server = try await LoopbackServer()
        // 256 x 256 RGBA, stored uncompressed: about 256 KiB, two to three seconds at 100K/s.
        let body = SampleImages.png(width: 256, height: 256)
        server.route("/big.png", .ok(body))
        let list = directory.write(server.url("/big.png"), to: "l")
        let (process, text) = try await onTerminalText(
            ["--limit-rate", "100K", list], columns: 120, environment: ["TERM": "xterm", "NO_COLOR": "1"], seconds: 40)

        #expect(process.terminationStatus == 0)
        let redraws = text.components(separatedBy: "\r").filter {
            $0.contains("downloaded") && !$0.contains("sdfetch:")
        }
        // Redraws while the image is still arriving: none done, yet bytes counted and a rate.
        let arriving = redraws.filter { $0.contains("0/1 ") && !$0.contains("  0 B  ") }
        #expect(arriving.count >= 3, "\(redraws)")
        let counts = Set(arriving.compactMap { $0.components(separatedBy: "  ").first { $0.hasSuffix("KiB") } })
        #expect(counts.count >= 2, "the byte count moves: \(arriving)")
        #expect(arriving.contains { !$0.contains("ETA --:--") }, "an ETA from the bytes still to come: \(arriving)")
    }

    @Test("TERM=dumb gets no redrawn bar under --progress auto")
    func dumbTerminal() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(300)))
        let list = directory.write(server.url("/a.png"), to: "l")
        let (process, text) = try await onTerminalText(
            [list], environment: ["TERM": "dumb"], seconds: 30)

        #expect(process.terminationStatus == 0)
        #expect(!text.contains("\r") && !text.contains("\u{1B}"))
        #expect(text.hasPrefix("sdfetch: 1 URL: 1 downloaded"))
    }

    @Test(
        "a regular file's lines are counted up front: every redraw shows the true total, and an ETA once a URL is done")
    func trueTotal() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<40).map { "/t\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(
                path, ScriptedResponse(status: 200, body: SampleImages.png(seed: index), delay: .milliseconds(100)))
        }
        // Comments, blank lines and a duplicate: the total counts meaningful lines.
        let lines = ["# list", ""] + paths.map { server.url($0) } + [server.url(paths[0])]
        let list = directory.write(lines.joined(separator: "\n"), to: "l")
        let (process, text) = try await onTerminalText(
            ["-j", "2", list], columns: 120, environment: ["TERM": "xterm", "NO_COLOR": "1"], seconds: 40)

        let redraws = text.components(separatedBy: "\r").dropFirst().filter {
            $0.contains("downloaded") && !$0.hasPrefix("sdfetch") && !$0.hasPrefix("\u{1B}[K")
        }
        #expect(process.terminationStatus == 0)
        #expect(redraws.count >= 3)
        #expect(redraws.allSatisfy { $0.contains("/41 ") && !$0.contains("+") }, "\(redraws)")
        let firstProgress = redraws.first { !$0.contains(" 0/41") }
        #expect(firstProgress.map { $0.contains("ETA 0:") } == true, "\(String(describing: firstProgress))")
    }

    @Test("after a bar, failures are listed with their reasons: at most 20, then a count and where to look")
    func failuresAfterBar() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<23).map { "/gone\($0).png" }
        for path in paths { server.route(path, .status(404)) }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let (process, text) = try await onTerminalText(
            [list], columns: 200, environment: ["TERM": "xterm", "NO_COLOR": "1"], seconds: 30)

        #expect(process.terminationStatus == 1)
        let failureLines = text.components(separatedBy: "\n").filter { $0.contains("sdfetch: failed: http://") }
        #expect(failureLines.count == 20, "\(text.debugDescription)")
        #expect(failureLines.allSatisfy { $0.hasSuffix(": http-404: not found") || $0.contains(": http-404") })
        #expect(text.contains("sdfetch: 3 more not shown: 'sdfetch failed list'"))
        #expect(text.contains("--json"))
        // Listed after the bar: the last redraw comes before the first failure line.
        let lastRedraw = text.range(of: "downloaded", options: .backwards)
        let firstFailure = text.range(of: "sdfetch: failed:")
        #expect(lastRedraw != nil && firstFailure != nil)
        if let lastRedraw, let firstFailure {
            let summary = text.range(of: "sdfetch: 23 URLs")
            #expect(summary.map { firstFailure.lowerBound < $0.lowerBound } == true)
            _ = lastRedraw
        }
    }
}
