import Foundation
import SDFetchTestSupport
import Testing

/// Issue 13's first-run findings through the built binary: secrets, summaries, messages.
@Suite("first runs: secrets, summaries and messages", .cleansUp, .timeLimit(.minutes(1)))
struct FirstRunTests {
    let directory = TemporaryDirectory("first")
    var cache: String { directory.appending("cache") }

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--cache-dir", cache] + arguments, input: input,
            environment: ["HOME": directory.path])
    }

    @Test(
        "a password in userinfo is masked on stdout, stderr, in JSON, and never reaches -o names or the cache's files")
    func passwordMasked() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        server.route("/gone.png", .status(404))
        let base = "http://user:s3cr3t@127.0.0.1:\(server.port)"
        let list = directory.write("\(base)/a.png\n\(base)/gone.png\n\(base)/\n", to: "l")
        let text = try await sdfetch([list, "-o", directory.appending("out")])
        let json = try await sdfetch(["--json", "--retry-failed", list])

        for run in [text, json] {
            #expect(!run.standardOutput.contains("s3cr3t") && !run.standardError.contains("s3cr3t"))
        }
        #expect(text.standardOutput.contains("user:***@127.0.0.1"))
        #expect(text.standardError.contains("sdfetch: failed: http://user:***@127.0.0.1"))
        #expect(json.standardOutput.contains("\"url\":\"http://user:***@127.0.0.1"))
        #expect(json.standardOutput.contains("\"key\":\"http://user:***@127.0.0.1"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.appending("out"))
        #expect(!names.isEmpty && names.allSatisfy { !$0.contains("s3cr3t") })
        // Every file the cache keeps (index lines, failure records), read as bytes.
        let stored = try FileManager.default.subpathsOfDirectory(atPath: cache).compactMap {
            FileManager.default.contents(atPath: cache + "/" + $0)
        }
        #expect(stored.contains { $0.range(of: Data("user:***@127.0.0.1".utf8)) != nil })
        #expect(!stored.contains { $0.range(of: Data("s3cr3t".utf8)) != nil })
    }

    @Test("--summary FILE writes the totals as one JSON object and leaves --json output one object per URL")
    func summaryFile() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        server.route("/gone.png", .status(404))
        let list = directory.write(
            [server.url("/a.png"), server.url("/a.png"), server.url("/gone.png"), "nope"].joined(separator: "\n"),
            to: "l")
        let summaryPath = directory.appending("summary.json")
        let run = try await sdfetch(["--json", "--summary", summaryPath, list])

        #expect(run.status == 1)
        #expect(run.standardOutput.split(separator: "\n").count == 3)
        let data = try Data(contentsOf: URL(fileURLWithPath: summaryPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["urls"] as? Int == 3 && object["downloaded"] as? Int == 1)
        #expect(object["failed"] as? Int == 1 && object["invalid"] as? Int == 1 && object["interrupted"] as? Int == 0)
        #expect((object["errors"] as? [String: Int]) == ["http-404": 1])
        #expect(object["duplicates"] as? Int == 1 && object["requests"] as? Int == 2)
        #expect(object["bytes"] as? Int == SampleImages.png().count && object["seconds"] is Double)
    }

    @Test("-o on a file says it is not a directory")
    func outputIsAFile() async throws {
        let file = directory.write("x", to: "afile")
        let run = try await sdfetch(["-o", file, "-"], input: "http://127.0.0.1:9/a.png\n")
        #expect(run.status == 3)
        #expect(run.standardError == "sdfetch: -o \(file): exists and is not a directory\n")
    }

    @Test("a missing input file is reported without a summary of zeros")
    func missingInputNoZeroSummary() async throws {
        let run = try await sdfetch([directory.appending("missing.txt")])
        #expect(run.status == 3)
        #expect(run.standardError.contains("cannot read"))
        #expect(!run.standardError.contains("0 URLs"))
    }

    @Test("transposed command words get a suggestion, and 'failed bogus' points to failed's own help")
    func suggestionsAndHints() async throws {
        let clena = try await sdfetch(["clena"])
        let stast = try await sdfetch(["stast"])
        let bogus = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["failed", "bogus"])
        #expect(clena.standardError.contains("(did you mean 'sdfetch clean'?)"))
        #expect(stast.standardError.contains("(did you mean 'sdfetch stats'?)"))
        #expect(bogus.status == 2 && bogus.standardError.contains("Try 'sdfetch failed --help'"))
    }

    @Test("help of a cache command does not repeat fetch's progress and proxy text")
    func perCommandHelp() async throws {
        let stats = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["help", "stats"])
        let path = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["path", "--help"])
        let fetch = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["help", "fetch"])
        for run in [stats, path] {
            #expect(!run.standardOutput.contains("TERM=dumb") && !run.standardOutput.contains("progress bar"))
            #expect(!run.standardOutput.contains("130 interrupted") && run.standardOutput.contains("SDFETCH_CACHE_DIR"))
        }
        #expect(path.standardOutput.contains("1 some URL has no entry"))
        #expect(fetch.standardOutput.contains("TERM=dumb") && fetch.standardOutput.contains("130 interrupted"))
    }

    @Test(
        "-q is accepted by every command",
        arguments: [
            ["stats", "-q"], ["path", "-q", "http://h/x"], ["failed", "list", "-q"], ["clean", "-q", "--dry-run"],
        ])
    func quietEverywhere(arguments: [String]) async throws {
        let run = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), [arguments[0], "--cache-dir", cache] + arguments.dropFirst())
        #expect(run.status != 2, "\(run.standardError)")
    }

    @Test(
        "numeric options past their bound are usage errors, never a crash",
        arguments: [
            ["-t", "9300000000"], ["--max-age", "15251w"], ["--max-bytes", "99999T"],
            ["--max-pixels", "99999999999999999"],
        ])
    func boundedOptions(arguments: [String]) async throws {
        let run = try await sdfetch(arguments + ["-"], input: "")
        let clean = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["clean", "--cache-dir", cache, "--max-age", "15251w"])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("option \(arguments[0])"))
        #expect(clean.status == 2)
    }

    @Test("a URL curl would refuse (two '@') is invalid and does not make its host 'host-down'")
    func doubleAtIsInvalid() async throws {
        let server = try await LoopbackServer()
        server.route("/ok.png", .ok(SampleImages.png()))
        let bad = (0..<8).map { "http://a@b@127.0.0.1:\(server.port)/x\($0).png" }
        let list = directory.write((bad + [server.url("/ok.png")]).joined(separator: "\n"), to: "l")
        let run = try await sdfetch([list])

        let statuses = run.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(statuses.filter { $0 == "invalid" }.count == 8)
        #expect(statuses.contains("downloaded"))
        #expect(!run.standardOutput.contains("host-down") && !run.standardError.contains("host-down"))
    }

    @Test("-j is capped to what the open-file limit allows, with a notice")
    func concurrencyCappedByDescriptorLimit() async throws {
        let binary = BuiltProduct.path("sdfetch")
        let run = try await ProcessRun.launch(
            "/bin/sh", ["-c", "ulimit -n 160 && exec \"$0\" --cache-dir \"$1\" -j 1024 -", binary, cache], input: "")
        #expect(run.status == 0)
        // (160 - 64 reserved) / 3 per transfer, less a fifth left to the probes of new hosts.
        #expect(run.standardError.contains("sdfetch: -j 1024 lowered to 25: 160 open files allowed (ulimit -n)"))
    }

    @Test("running out of descriptors is 'io', never 'host-down' for a healthy host")
    func descriptorExhaustionIsLocal() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<30).map { "/d\($0).png" }
        for path in paths { server.route(path, .ok(SampleImages.png())) }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        // At 11 descriptors some runs cannot open a socket (EMFILE), others not even the list:
        // several runs, so the socket case is met; none may blame the host.
        var outputs = ""
        for run in 0..<8 {
            let result = try await ProcessRun.launch(
                "/bin/sh",
                [
                    "-c", "ulimit -n 11 && exec \"$0\" --cache-dir \"$1\" \"$2\"", BuiltProduct.path("sdfetch"),
                    directory.appending("cache\(run)"), list,
                ])
            outputs += result.standardOutput + result.standardError
        }
        #expect(!outputs.contains("host-down"))
        #expect(!outputs.contains("connect:"))
    }
}
