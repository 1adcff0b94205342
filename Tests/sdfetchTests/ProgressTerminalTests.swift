import Foundation
import SDFetchTestSupport
import Testing

/// The progress bar on a real pseudo-terminal: redrawn with `\r`, showing counts, cleared before the summary.
@Suite("progress bar on a terminal", .timeLimit(.minutes(1)))
struct ProgressTerminalTests {
    let directory = TemporaryDirectory("pty")

    @Test("under --progress auto a terminal on stderr gets a redrawn bar with counts, then the summary")
    func redrawnBar() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<12).map { "/slow\($0).png" }
        for (index, path) in paths.enumerated() {
            server.route(path, ScriptedResponse(status: 200, body: SampleImages.png(seed: index), delay: .milliseconds(150)))
        }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let terminal = try PseudoTerminal(columns: 100)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache"), "--progress", "auto", "-j", "2", list]
        process.environment = ["TERM": "xterm", "NO_COLOR": "1", "HOME": directory.path]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = terminal.slaveHandle
        try process.run()
        terminal.closeSlave()
        let bytes = await terminal.captureInBackground(until: .now + .seconds(30))
        process.waitUntilExit()
        try await server.shutdown()
        let text = String(decoding: bytes, as: UTF8.self)
        let attachment = directory.path + ".capture"
        try? Data(bytes).write(to: URL(fileURLWithPath: attachment))

        #expect(process.terminationStatus == 0)
        let redraws = text.components(separatedBy: "\r").dropFirst().filter { !$0.hasPrefix("\u{1B}[K") }
        #expect(redraws.count >= 4, "expected several redraws, got: \(text.debugDescription)")
        #expect(redraws.contains { $0.contains("downloaded") && $0.contains("/12") && $0.contains("cached") })
        #expect(redraws.contains { $0.contains("12/12") } || text.contains("12 downloaded"))
        #expect(redraws.allSatisfy { line in (line.components(separatedBy: "\u{1B}[K").first ?? line).count < 100 })
        #expect(text.contains("\r\u{1B}[Ksdfetch: 12 URLs: 12 downloaded"))
        #expect(!text.contains("\u{1B}[3"), "NO_COLOR must keep colour off")
        directory.remove()
    }

    @Test("TERM=dumb gets no redrawn bar under --progress auto")
    func dumbTerminal() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .milliseconds(300)))
        let list = directory.write(server.url("/a.png"), to: "l")
        let terminal = try PseudoTerminal()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", directory.appending("cache"), list]
        process.environment = ["TERM": "dumb", "HOME": directory.path]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = terminal.slaveHandle
        try process.run()
        terminal.closeSlave()
        let text = String(decoding: await terminal.captureInBackground(until: .now + .seconds(30)), as: UTF8.self)
        process.waitUntilExit()
        try await server.shutdown()

        #expect(process.terminationStatus == 0)
        #expect(!text.contains("\r") && !text.contains("\u{1B}"))
        #expect(text.hasPrefix("sdfetch: 1 URL: 1 downloaded"))
        directory.remove()
    }
}
