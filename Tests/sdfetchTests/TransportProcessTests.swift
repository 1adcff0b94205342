import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The built binary under conditions only a process can set up: a low open-file limit,
/// and `-v`'s notes on standard error.
@Suite("transport in the binary", .cleansUp, .timeLimit(.minutes(1)))
struct TransportProcessTests {
    let directory = TemporaryDirectory("transport-process")

    @Test("under ulimit -n 40, -j 64 is lowered with a notice and no URL is blamed on the host")
    func descriptorLimit() async throws {
        let server = try await LoopbackServer()
        var lines: [String] = []
        for index in 0..<120 {
            server.route("/\(index).png", .ok(SampleImages.png(seed: index)))
            lines.append(server.url("/\(index).png"))
        }
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let script = "ulimit -n 40 && exec \"$0\" \"$@\""
        let run = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", script, BuiltProduct.path("sdfetch"), "--no-config", "-j", "64", "--json",
                "--cache-dir", directory.appending("cache"), list,
            ])

        #expect(run.standardError.contains("-j 64 lowered to"))
        #expect(!run.standardOutput.contains("host-down"))
        let downloaded = run.standardOutput.split(separator: "\n").filter { $0.contains("\"status\":\"downloaded\"") }
        #expect(downloaded.count == 120)
    }

    @Test("a host that is down is one line on stderr, counted at the end and in --summary")
    func hostDownIsOneLine() async throws {
        // Accepts and never answers: every TLS handshake to it times out.
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let live = try await LoopbackServer()
        var lines = (0..<9).map { "https://127.0.0.1:\(silent.port)/\($0).png" }
        for index in 0..<3 {
            live.route("/\(index).png", .ok(SampleImages.png(seed: index)))
            lines.append(live.url("/\(index).png"))
        }
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        let summary = directory.appending("summary.json")
        let run = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"),
            [
                "--no-config", "--progress", "never", "-t", "1", "--json", "--summary", summary,
                "--cache-dir", directory.appending("cache"), list,
            ])

        #expect(run.status == 1)
        let host = "https://127.0.0.1:\(silent.port)"
        let stderrLines = run.standardError.split(separator: "\n")
        // The URL that met the timeout, the host's one line, the closing count.
        #expect(stderrLines.filter { $0.contains(host) }.count == 3, "\(run.standardError)")
        #expect(run.standardError.contains("sdfetch: failed: \(host) is down: no connection within the timeout"))
        #expect(run.standardError.contains("sdfetch: 1 host down, 8 URLs failed host-down: \(host) (8, timeout)"))
        let outLines = run.standardOutput.split(separator: "\n")
        let silentTimeouts = outLines.filter { $0.contains("\"error\":\"timeout\"") && $0.contains(host) }
        #expect(silentTimeouts.count == 1, "\(run.standardOutput)")
        let failed = outLines.filter { $0.contains("\"error\":\"host-down\"") }
        #expect(failed.count == 8)
        #expect(failed.allSatisfy { $0.contains("\"host_cause\":\"timeout\"") })
        let written = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(written.contains("\"hosts_down\":{\"\(host)\":8}"), "\(written)")
        #expect(written.contains("\"host_causes\":{\"timeout\":8}"), "\(written)")
    }

    @Test("a re-run within --host-down-for makes no connection to a host found down; --retry-failed does")
    func hostDownIsRemembered() async throws {
        // Accepts, reads the request and never answers.
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let live = try await LoopbackServer()
        live.route("/ok.png", .ok(SampleImages.png()))
        let lines = (0..<3).map { silent.url("/\($0).png") } + [live.url("/ok.png")]
        let list = directory.write(lines.joined(separator: "\n"), to: "list.txt")
        func fetch(_ extra: [String]) async throws -> ProcessRun {
            try await ProcessRun.launch(
                BuiltProduct.path("sdfetch"),
                [
                    "--no-config", "--progress", "never", "-t", "1", "--json", "--cache-dir",
                    directory.appending("cache"),
                ]
                    + extra + [list])
        }

        let first = try await fetch([])
        #expect(first.standardOutput.contains("\"error\":\"timeout\""), "\(first.standardOutput)")
        let dialled = silent.connections
        #expect(dialled >= 1)
        let records = try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/hosts"))
        #expect(records.count == 1)

        let again = try await fetch([])
        #expect(silent.connections == dialled, "the re-run dialled the host found down")
        let down = again.standardOutput.split(separator: "\n").filter { $0.contains("\"error\":\"host-down\"") }
        #expect(down.count == 3, "\(again.standardOutput)")
        #expect(down.allSatisfy { $0.contains("\"host_cause\":\"timeout\"") && $0.contains("found down") })
        #expect(again.standardOutput.contains("\"status\":\"cached\""))

        let retried = try await fetch(["--retry-failed"])
        #expect(silent.connections > dialled)
        #expect(retried.standardOutput.contains("\"error\":\"timeout\""))

        // --host-down-for 0 neither reads nor writes the memory.
        let before = silent.connections
        _ = try await fetch(["--host-down-for", "0"])
        #expect(silent.connections > before)

        // `failed clear` forgets the hosts too.
        let clear = try await ProcessRun.sdfetch(["failed", "clear", "--cache-dir", directory.appending("cache")])
        #expect(clear.standardOutput.contains("removed 1 host-down record"), "\(clear.standardOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("cache/hosts")).isEmpty)
    }

    @Test("-v reports a retry with its wait and a redirect, escaped")
    func verboseNotes() async throws {
        let server = try await LoopbackServer()
        server.route("/flaky.png", .status(503), .ok(SampleImages.png(seed: 1)))
        server.route("/moved\u{1B}.png", .redirect(to: "/a.png"))
        server.route("/moved%1B.png", .redirect(to: "/a.png"))
        server.route("/a.png", .ok(SampleImages.png(seed: 2)))
        let list = directory.write(
            [server.url("/flaky.png"), server.url("/moved%1B.png")].joined(separator: "\n"), to: "list.txt")
        let run = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "-v", "--progress", "never", "--cache-dir", directory.appending("cache"), list])
        let quiet = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "--refresh", "--progress", "never", "--cache-dir", directory.appending("cache2"), list])

        #expect(run.status == 0)
        #expect(
            run.standardError.contains(
                "\(server.url("/flaky.png")): http-503 (server answered 503); retry 1 of 2 after waiting"))
        #expect(
            run.standardError.contains("\(server.url("/moved%1B.png")): followed 1 redirect to \(server.url("/a.png"))")
        )
        #expect(!run.standardError.contains("\u{1B}"))
        #expect(!quiet.standardError.contains("followed"))
    }

    @Test("-v reports a revalidation and its 304")
    func verboseRevalidation() async throws {
        let server = try await LoopbackServer()
        server.route(
            "/a.png", .ok(SampleImages.png(seed: 3), headers: [("ETag", "\"v1\"")]),
            .status(304, headers: [("ETag", "\"v1\"")]))
        let list = directory.write(server.url("/a.png") + "\n", to: "list.txt")
        let arguments = ["--no-config", "-v", "--progress", "never", "--cache-dir", directory.appending("cache"), list]
        _ = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let second = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments + ["--refresh"])

        #expect(second.standardOutput.hasPrefix("revalidated\t"))
        #expect(second.standardError.contains("\(server.url("/a.png")): revalidating (If-None-Match)"))
        #expect(second.standardError.contains("304 not modified"))
    }
}
