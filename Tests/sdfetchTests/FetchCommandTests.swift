import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The built `sdfetch` binary against a loopback server: inputs, exit statuses, report formats.
@Suite("sdfetch fetch, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct FetchCommandTests {
    let directory = TemporaryDirectory("cli")
    var cache: String { directory.appending("cache") }

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--cache-dir", cache] + arguments, input: input)
    }

    private func rows(_ run: ProcessRun) -> [[String]] {
        run.standardOutput.split(separator: "\n").map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
    }

    private func server(_ paths: [String]) async throws -> LoopbackServer {
        let server = try await LoopbackServer()
        for (index, path) in paths.enumerated() { server.route(path, .ok(SampleImages.png(seed: index))) }
        return server
    }

    @Test("no FILE reads a piped standard input, and '-' reads it among files")
    func standardInput() async throws {
        let server = try await server(["/a.png", "/b.png"])
        let piped = try await sdfetch([], input: server.url("/a.png") + "\n")
        let file = directory.write(server.url("/b.png") + "\n", to: "list.txt")
        let mixed = try await sdfetch([file, "-"], input: "# comment\n\n" + server.url("/a.png") + "\r\n")

        #expect(piped.status == 0)
        #expect(rows(piped).map { $0[0] } == ["downloaded"])
        #expect(mixed.status == 0)
        #expect(Set(rows(mixed).map { $0[2] }) == [server.url("/a.png"), server.url("/b.png")])
        #expect(mixed.standardError.contains("2 URLs: 1 downloaded, 1 cached; 0 duplicates coalesced"))
    }

    @Test("exit status 1 and a failure line when a URL fails, a summary unless -q")
    func failedURL() async throws {
        let server = try await server(["/a.png"])
        let list = directory.write(
            [server.url("/a.png"), server.url("/gone.png"), server.url("/a.png")].joined(separator: "\n"), to: "l")
        let run = try await sdfetch([list])
        let quiet = try await sdfetch(["-q", "--retry-failed", list])  // the 404 is blacklisted by now

        #expect(run.status == 1)
        #expect(run.standardError.contains("sdfetch: failed: \(server.url("/gone.png")): http-404"))
        #expect(run.standardError.contains("1 duplicate coalesced"))
        #expect(quiet.status == 1)
        #expect(quiet.standardError.contains("sdfetch: failed: \(server.url("/gone.png"))"))
        #expect(!quiet.standardError.contains("coalesced"))
        #expect(rows(quiet).count == 2)
    }

    @Test("an unreadable FILE exits 3 with a 'did you mean' hint, and the other inputs still run")
    func unreadableFile() async throws {
        let server = try await server(["/a.png"])
        let list = directory.write(server.url("/a.png") + "\n", to: "good.txt")
        let run = try await sdfetch(["clen", list])

        #expect(run.status == 3)
        #expect(
            run.standardError.contains(
                "sdfetch: cannot read clen: no such file or directory (did you mean 'sdfetch clean'?)"))
        #expect(rows(run).map { $0[0] } == ["downloaded"])
    }

    @Test("a usage error exits 2 and names the option with a suggestion")
    func usageError() async throws {
        let run = try await sdfetch(["--concurency", "4"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("unknown option --concurency (did you mean '--concurrency'?)"))
        #expect(run.standardOutput.isEmpty)
    }

    @Test("an unusable cache directory exits 3")
    func unusableCache() async throws {
        let file = directory.write("x", to: "not-a-dir")
        // No input: the child exits before reading stdin, and ProcessRun's write would then hit EPIPE.
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--cache-dir", file + "/sub"])
        #expect(run.status == 3)
        #expect(run.standardError.contains("cache directory"))
    }

    @Test("--json prints one parseable object per URL with every field")
    func jsonLines() async throws {
        let server = try await server(["/a.png"])
        let list = directory.write(
            [server.url("/a.png"), server.url("/a.png"), server.url("/nope.png"), "not a url"].joined(separator: "\n"),
            to: "l")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 1)
        let objects = try run.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 3)
        let fields = [
            "url", "key", "status", "path", "format", "bytes", "width", "height", "http_status", "error", "duplicates",
            "ms", "source",
        ]
        for object in objects { #expect(Set(object.keys).isSuperset(of: fields)) }
        let good = try #require(objects.first { $0["status"] as? String == "downloaded" })
        #expect(good["format"] as? String == "png")
        // Dimensions come from the verifier; null is allowed where it does not read them.
        #expect(
            (good["width"] as? Int == 4 || good["width"] is NSNull)
                && (good["height"] as? Int == 4 || good["height"] is NSNull))
        #expect(
            good["bytes"] as? Int == SampleImages.png(seed: 0).count && good["key"] as? String == server.url("/a.png"))
        #expect(good["ms"] is Int && good["source"] is NSNull)
        #expect(good["http_status"] as? Int == 200 && good["duplicates"] as? Int == 1)
        #expect(FileManager.default.fileExists(atPath: try #require(good["path"] as? String)))
        #expect(good["error"] is NSNull)
        let failed = try #require(objects.first { $0["status"] as? String == "failed" })
        #expect(failed["error"] as? String == "http-404" && failed["path"] is NSNull)
        let invalid = try #require(objects.first { $0["status"] as? String == "invalid" })
        #expect(invalid["error"] as? String == "invalid-url" && invalid["source"] as? String == list + ":4")
        #expect(invalid["url"] as? String == "not a url" && invalid["key"] is NSNull)
    }

    @Test("control characters in an invalid line are escaped on stdout and stderr")
    func escapedInvalidLine() async throws {
        let list = directory.write("http://h/a\u{1B}[2Jb\u{7}\n", to: "evil.txt")
        let run = try await sdfetch([list])
        #expect(run.status == 1)
        #expect(run.standardOutput == "invalid\t-\thttp://h/a\\x1b[2Jb\\x07\n")
        #expect(run.standardError.contains("sdfetch: invalid: \(list):1: contains a control character"))
        #expect(!run.standardOutput.contains("\u{1B}") && !run.standardError.contains("\u{1B}"))
    }

    @Test("shards 0/3, 1/3 and 2/3 together cover a list exactly once")
    func shards() async throws {
        let paths = (0..<30).map { "/s\($0).png" }
        let server = try await server(paths)
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        var seen: [String] = []
        for index in 0..<3 {
            let run = try await sdfetch(["--shard", "\(index)/3", list])
            #expect(run.status == 0)
            seen += rows(run).map { $0[2] }
        }

        #expect(seen.count == paths.count)
        #expect(Set(seen) == Set(paths.map { server.url($0) }))
        #expect(server.totalRequests == paths.count)
    }

    @Test("an invalid line is reported by shard 0 only, so the shards' reports together hold it once")
    func invalidLineInOneShard() async throws {
        let list = directory.write("not a url\nhttp://127.0.0.1:9/a.png\n", to: "l")
        var invalid: [Int] = []
        for index in 0..<3 {
            let run = try await sdfetch(["--shard", "\(index)/3", "--offline", list])
            if rows(run).contains(where: { $0[0] == "invalid" }) { invalid.append(index) }
            #expect(run.standardError.contains("invalid: ") == (index == 0), "shard \(index): \(run.standardError)")
        }
        #expect(invalid == [0])
    }

    /// Dispatch installs the trap's handler some time after the process starts. A SIGINT
    /// disposition of "ignore" at any moment in between means a Ctrl-C then is lost and the
    /// run goes on to its end (seen in a loaded test run), so each start is watched through
    /// `/proc` until the handler is in place: before it the default action must stand.
    @Test("SIGINT is never ignored while a run starts, so an early Ctrl-C is never lost")
    func earlyInterrupt() async throws {
        var ignoredStarts = 0
        var caughtStarts = 0
        for _ in 0..<20 {
            let run = try PipedRun.start(["--cache-dir", cache, "-"], home: directory.path)
            let status = "/proc/\(run.process.processIdentifier)/status"
            let deadline = ContinuousClock.now + .seconds(10)
            var wasIgnored = false
            while ContinuousClock.now < deadline, let text = try? String(contentsOfFile: status, encoding: .utf8) {
                if Self.mask("SigIgn", in: text) & 0x2 != 0 { wasIgnored = true }
                if Self.mask("SigCgt", in: text) & 0x2 != 0 {
                    caughtStarts += 1
                    break
                }
            }
            if wasIgnored { ignoredStarts += 1 }
            _ = try await run.finish()
        }
        #expect(ignoredStarts == 0)
        #expect(caughtStarts == 20)
    }

    /// A signal set of `/proc/PID/status` (`SigIgn`, `SigCgt`: hexadecimal, bit N-1 for signal N).
    private static func mask(_ field: String, in status: String) -> UInt64 {
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { UInt64($0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
            ?? 0
    }

    /// Runs the built binary with `arguments`, its output in the files `stdout` and `stderr`,
    /// and sends it SIGINT once `server` has had `requests` requests; returns it exited. The
    /// signal goes from a thread of the test's own: polled on the cooperative pool, which the
    /// suites beside this one keep busy, it can come after the last request.
    private func interrupted(
        _ arguments: [String], afterRequests requests: Int, to server: LoopbackServer, stdout: String, stderr: String
    ) async throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: stdout)
        process.standardError = FileHandle(forWritingAtPath: stderr)
        try process.run()
        let pid = process.processIdentifier
        await onOwnThread {
            let deadline = ContinuousClock.now + .seconds(20)
            while server.totalRequests < requests, ContinuousClock.now < deadline { usleep(1000) }
            kill(pid, SIGINT)
        }
        await process.exited()
        return process
    }

    @Test("SIGINT stops reading and cancels transfers, the run ends cleanly and exits 130")
    func interrupt() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<40).map { "/slow\($0).png" }
        // The first eight answer in 0.4 s, the rest only after 30 s: the signal lands mid-run
        // however late this task's polling resumes on a loaded machine (seen: 4 s late, when
        // 0.4 s for all had let the whole list finish first).
        for (index, path) in paths.enumerated() {
            let delay = index < 8 ? ThreadSanitizer.scaled(.milliseconds(400)) : .seconds(30)
            server.route(path, ScriptedResponse(status: 200, body: SampleImages.png(), delay: delay))
        }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let stdout = directory.write("", to: "out.txt")
        let stderr = directory.write("", to: "err.txt")
        let process = try await interrupted(
            ["--cache-dir", cache, "-j", "4", list], afterRequests: 4, to: server, stdout: stdout, stderr: stderr)

        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
        #expect(server.totalRequests < paths.count)
        let errors = try String(contentsOfFile: stderr, encoding: .utf8)
        #expect(errors.contains("sdfetch: interrupted, finishing"))
        #expect(errors.contains("sdfetch: interrupted after"))
        // Interrupted URLs are counted apart from failures, in the summary and the TSV.
        let output = try String(contentsOfFile: stdout, encoding: .utf8)
        let statuses = Set(output.split(separator: "\n").map { $0.split(separator: "\t")[0] })
        #expect(statuses.contains("interrupted"))
        #expect(!statuses.contains("failed"))
        #expect(errors.contains(" interrupted;") && !errors.contains(" failed"), "\(errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/tmp").isEmpty)
    }

    @Test("after SIGINT, the URLs of a list file that the run never reached are counted, on stderr and in --summary")
    func interruptCountsNotReached() async throws {
        let server = try await LoopbackServer()
        let count = 20_000
        for index in 0..<count {
            server.route("/n\(index).png", ScriptedResponse(status: 200, body: SampleImages.png(), delay: .seconds(30)))
        }
        let list = directory.write((0..<count).map { server.url("/n\($0).png") }.joined(separator: "\n"), to: "long")
        let summary = directory.appending("summary.json")
        let stderr = directory.write("", to: "err.txt")
        let process = try await interrupted(
            ["--cache-dir", cache, "-j", "2", "--summary", summary, list], afterRequests: 2, to: server,
            stdout: "/dev/null", stderr: stderr)
        #expect(process.terminationStatus == 130)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        let urls = try #require(object["urls"] as? Int)
        let notReached = try #require(object["not_reached"] as? Int)
        // Every line is either a URL the run counted or one it never reached.
        #expect(urls + notReached == count && notReached > 0, "\(urls) + \(notReached)")
        let errors = try String(contentsOfFile: stderr, encoding: .utf8)
        #expect(errors.contains("; \(notReached) URLs not reached\n"), "\(errors)")
    }

    @Test("--summary never replaces a list of URLs or an input of the run (exit 2), only an earlier summary")
    func summaryKeepsLists() async throws {
        let server = try await server(["/a.png"])
        let list = directory.appending("list.txt")
        let urls = "\(server.url("/a.png"))\n"
        try urls.write(toFile: list, atomically: true, encoding: .utf8)
        // The list given as --summary's value: the run would read standard input.
        let forgotten = try await sdfetch(["-q", "--summary", list], input: urls)
        #expect(forgotten.status == 2, "\(forgotten.standardError)")
        #expect(forgotten.standardError.contains("is not a summary"), "\(forgotten.standardError)")
        #expect(try String(contentsOfFile: list, encoding: .utf8) == urls)
        // A list that starts as a summary would is still an input of its run.
        let jsonList = directory.appending("list.jsonl")
        try #"{"urls":1}"#.write(toFile: jsonList, atomically: true, encoding: .utf8)
        let both = try await sdfetch(["-q", "--summary", jsonList, jsonList])
        #expect(both.status == 2 && both.standardError.contains("also an input"), "\(both.standardError)")
        // A stream's name is written through, whatever file the stream is.
        let log = directory.appending("run.log")
        try "earlier lines\n".write(toFile: log, atomically: true, encoding: .utf8)
        let binary = BuiltProduct.path("sdfetch")
        let stream = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", "exec \"$0\" --cache-dir \"$1\" -q --summary /dev/stderr \"$2\" 2>> \"$3\"", binary, cache, list,
                log,
            ])
        #expect(stream.status == 0)
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        // Appended where the stream stands: a reopened /dev/stderr was the file from its start.
        #expect(logged.hasPrefix("earlier lines\n") && logged.contains(#"{"urls":1,"#), "\(logged)")
        // Standard output as --summary: after the result lines, none of them lost.
        let report = directory.appending("report.jsonl")
        let json = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", "exec \"$0\" --cache-dir \"$1\" --json --summary /dev/stdout \"$2\" > \"$3\"", binary, cache,
                list, report,
            ])
        #expect(json.status == 0)
        let reported = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
        #expect(reported.count == 2 && reported[0].contains("\"status\":") && reported[1].hasPrefix(#"{"urls":1,"#))
        // An earlier summary (or an empty file) is replaced.
        let summary = directory.appending("summary.json")
        try "".write(toFile: summary, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let run = try await sdfetch(["-q", "--summary", summary, list])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(try String(contentsOfFile: summary, encoding: .utf8).hasPrefix(#"{"urls":1,"#))
        }
    }

    @Test("--summary writes the file opened at the start: a link planted at its name later is not followed")
    func summaryOpenedAtStart() async throws {
        let server = try await server(["/a.png"])
        let summary = directory.write("", to: "summary.json")
        let victim = directory.write("precious\n", to: "victim.txt")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", cache, "-q", "--summary", summary]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The list stays open while the name is swapped: the run has started and is not over.
        input.fileHandleForWriting.write(Data((server.url("/a.png") + "\n").utf8))
        #expect(await server.waitForRequests(1))
        try FileManager.default.moveItem(atPath: summary, toPath: summary + ".moved")
        try FileManager.default.createSymbolicLink(atPath: summary, withDestinationPath: victim)
        try input.fileHandleForWriting.close()
        await process.exited()
        #expect(process.terminationStatus == 0)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try String(contentsOfFile: summary + ".moved", encoding: .utf8).hasPrefix(#"{"urls":1,"#))
        // A link already there at the start is refused, not followed.
        let linked = try await sdfetch(["-q", "--summary", summary, "-"], input: server.url("/a.png"))
        #expect(linked.status == 2 && linked.standardError.contains("symbolic link"), "\(linked.standardError)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    @Test("--summary on a FIFO that nobody reads ends the run anyway, exit 3, without waiting")
    func summaryUnreadFIFO() async throws {
        let server = try await server(["/a.png"])
        let fifo = directory.appending("summary.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let run = try await sdfetch(["-q", "--summary", fifo, "-"], input: server.url("/a.png") + "\n")
        #expect(run.status == 3, "\(run.standardError)")
        #expect(run.standardError.contains("cannot write --summary \(fifo): no process reads the FIFO"))
        #expect(run.standardOutput.hasPrefix("downloaded\t"))
    }

    @Test("results that cannot be written (a full disk, a --summary nowhere) are told, and exit 3")
    func unwritableResults() async throws {
        let server = try await server(["/a.png"])
        let list = directory.appending("list.txt")
        try "\(server.url("/a.png"))\n".write(toFile: list, atomically: true, encoding: .utf8)
        let binary = BuiltProduct.path("sdfetch")
        let full = try await ProcessRun.launch(
            "/bin/sh",
            [
                "-c", "exec \"$0\" --no-config --progress never --cache-dir \"$1\" \"$2\" > /dev/full", binary, cache,
                list,
            ])
        #expect(full.status == 3, "\(full.standardError)")
        #expect(full.standardError.contains("cannot write standard output: no space left on device"))
        let nowhere = try await sdfetch(["-q", "--summary", directory.appending("missing/s.json"), list])
        #expect(nowhere.status == 3)
        #expect(nowhere.standardError.contains("cannot write --summary"))
        let fine = try await sdfetch(["-q", list])
        #expect(fine.status == 0, "a cached run that writes its results still exits 0")
    }
}
