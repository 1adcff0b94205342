import Foundation
import SDFetchTestSupport
import Testing

/// What a curl user types first, what CI and cron need from exit codes, and the messages
/// that must point the right way: through the built binary.
@Suite("first use: URL arguments, --fail-on, CI and cron, messages", .cleansUp, .timeLimit(.minutes(1)))
struct FirstUseTests {
    let directory = TemporaryDirectory("first-use")
    var cache: String { directory.appending("cache") }

    private func sdfetch(
        _ arguments: [String], input: String = "", cacheDirectory: String? = nil, in folder: String? = nil
    ) async throws -> ProcessRun {
        let arguments = [BuiltProduct.path("sdfetch"), "--cache-dir", cacheDirectory ?? cache] + arguments
        // In `folder` (for relative names): through a shell that changes into it first.
        return try await ProcessRun.launch(
            "/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", folder ?? directory.path] + arguments,
            input: input, environment: ["HOME": directory.path])
    }

    // MARK: - URL arguments

    @Test("a URL argument is fetched; a bad one is invalid at arguments:N")
    func urlArguments() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let run = try await sdfetch([server.url("/a.png"), "https://h:99999/x.png"])
        #expect(run.status == 1, "\(run.standardError)")
        #expect(run.standardOutput.contains("downloaded\t"))
        #expect(run.standardError.contains("sdfetch: invalid: arguments:2: bad port"))
        #expect(!run.standardError.contains("cannot read"))
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("an argument that parses as a URL is fetched even when a path spelt so exists; ./ reads the file")
    func fileNamedLikeAURL() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        server.route("/list", .ok(SampleImages.png(seed: 1)))
        // `http://127.0.0.1:PORT/list` is also the path `http:/127.0.0.1:PORT/list`: made here.
        let url = server.url("/list")
        let path = "http:/" + url.dropFirst("http://".count)
        let folder = directory.appending("work")
        try FileManager.default.createDirectory(
            atPath: folder + "/" + path.prefix(upTo: try #require(path.lastIndex(of: "/"))),
            withIntermediateDirectories: true)
        _ = directory.write(server.url("/a.png") + "\n", to: "work/" + path)
        let asURL = try await sdfetch([url], in: folder)
        #expect(asURL.status == 0, "\(asURL.standardError)")
        #expect(server.requests(for: "/list") == 1 && server.requests(for: "/a.png") == 0)
        let asFile = try await sdfetch(["./" + url], in: folder)
        #expect(asFile.status == 0, "\(asFile.standardError)")
        #expect(asFile.standardOutput.contains(server.url("/a.png")))
        #expect(server.requests(for: "/a.png") == 1 && server.requests(for: "/list") == 1)
    }

    @Test("with one URL, -o names a file as curl's -o does; -o DIR/ is a folder")
    func outputFileForOneURL() async throws {
        let server = try await LoopbackServer()
        server.route("/cat.png", .ok(SampleImages.png()))
        let file = directory.appending("out/cat-copy.png")
        let run = try await sdfetch([server.url("/cat.png"), "-o", file])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(FileManager.default.contents(atPath: file) == Data(SampleImages.png()))
        #expect(run.standardOutput.contains("downloaded\t\(file)\t"))
        let folder = directory.appending("folder") + "/"
        let again = try await sdfetch([server.url("/cat.png"), "-o", folder])
        #expect(again.status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(names.count == 1 && names[0].hasPrefix("cat-") && names[0].hasSuffix(".png"))
        #expect(
            again.standardOutput.contains("\t\(folder)\(names.first ?? "")\t"), "one slash: \(again.standardOutput)")
    }

    // MARK: - Exit status for CI and cron

    /// A list with a dead URL, run as the README's recipes run it, twice over one cache.
    private func listWithDeadURL() async throws -> (LoopbackServer, String) {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        server.route("/dead.png", .status(404))
        return (server, directory.write(server.url("/a.png") + "\n" + server.url("/dead.png") + "\n", to: "urls.txt"))
    }

    @Test("the default fails a run with a known-dead URL; --fail-on failed,invalid passes it")
    func failOnSkipped() async throws {
        let (_, list) = try await listWithDeadURL()
        #expect(try await sdfetch([list]).status == 1)
        #expect(try await sdfetch([list]).status == 1)  // skipped, and skipped fails by default
        let tolerant = try await sdfetch(["--fail-on", "failed,invalid", list])
        #expect(tolerant.status == 0, "\(tolerant.standardError)")
        #expect(tolerant.standardOutput.contains("skipped\t"))
        #expect(try await sdfetch(["--fail-on", "none", "--offline", list]).status == 0)
        let bad = try await sdfetch(["--fail-on", "failed,skiped", list])
        #expect(bad.status == 2)
        #expect(bad.standardError.contains("'skiped'") && bad.standardError.contains("skipped"))
    }

    /// A list holding each kind of failure a list meets: a 404, a host that refuses
    /// connections, a host that never answers; and one good image. Runs get `timeout = 1`
    /// from the config file in their `HOME`, so the dead host costs a second.
    private func listWithEveryFailure(in folder: String) async throws -> (LoopbackServer, BlackholePort) {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        server.route("/dead.png", .status(404))
        let refusing = try RefusingPort()  // bound for the test: no other test's server takes it
        let silent = try BlackholePort()
        let urls = [server.url("/a.png"), server.url("/dead.png"), refusing.url("/r.png"), silent.url("/s.png")]
        let config = directory.appending(".config/sdfetch")
        for made in [folder, config] {
            try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        }
        try Data((urls.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/urls.txt"))
        try Data("timeout = 1\n".utf8).write(to: URL(fileURLWithPath: config + "/config"))
        return (server, silent)
    }

    /// The README line of the block starting `blockStart` that runs sdfetch, run as
    /// written by `sh` in `folder`, with the built sdfetch first on the `PATH`.
    private func recipe(
        _ blockStart: String, containing marker: String = "", in folder: String
    ) async throws
        -> ProcessRun
    {
        let block = try ReadmeBlocks.block(startingWith: blockStart, containing: marker)
        let line = try ReadmeBlocks.sdfetchLine(in: block)
        let bin = URL(fileURLWithPath: BuiltProduct.path("sdfetch")).deletingLastPathComponent().path
        return try await ProcessRun.launch(
            "/bin/sh", ["-c", "cd \"$1\" && \(line)", "sh", folder],
            environment: ["HOME": directory.path, "PATH": bin + ":/usr/bin:/bin"])
    }

    @Test("the README's CI recipes pass, run after run, with a 404, a refused host and a dead host in the list")
    func ciRecipes() async throws {
        for name in ["# GitHub Actions", "# GitLab CI"] {
            let folder = directory.appending(name.filter(\.isLetter))
            let (server, silent) = try await listWithEveryFailure(in: folder)
            for run in 1...2 {
                // The lock-file recipe starts "# GitHub Actions" too; the cache recipe writes a report.
                let result = try await recipe(name, containing: "report.jsonl", in: folder)
                #expect(result.status == 0, "\(name), run \(run): \(result.standardError)")
                let report = try String(contentsOfFile: folder + "/report.jsonl", encoding: .utf8)
                #expect(report.split(separator: "\n").count == 4, "\(report)")
                #expect(report.contains("\"status\":\(run == 1 ? "\"downloaded\"" : "\"cached\"")"))
                // The refused and the silent host: remembered as down by the first run.
                let hostDown = report.split(separator: "\n").filter { $0.contains("\"error\":\"host-down\"") }
                #expect(hostDown.count == (run == 1 ? 0 : 2), "\(report)")
            }
            #expect(server.requests(for: "/dead.png") == 1)
            withExtendedLifetime(silent) {}
        }
        // An invalid line still fails: the list itself is broken.
        let broken = directory.write("not a url\n", to: "broken.txt")
        #expect(try await sdfetch(["--fail-on", "invalid", broken]).status == 1)
    }

    @Test("the README's cron line prints a 404, a refused and a dead host once, and nothing while remembered")
    func cronRecipe() async throws {
        let folder = directory.appending("cron")
        let (_, silent) = try await listWithEveryFailure(in: folder)
        let first = try await recipe("# crontab -e", in: folder)
        let second = try await recipe("# crontab -e", in: folder)
        let lines = first.standardError.split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("sdfetch: failed: ") }, "\(first.standardError)")
        for path in ["/dead.png", "/r.png", "/s.png"] {
            #expect(lines.contains { $0.contains(path) }, "\(path): \(first.standardError)")
        }
        #expect(second.standardError.isEmpty, "\(second.standardError)")
        withExtendedLifetime(silent) {}
    }

    // MARK: - merge

    @Test("merge of a folder that is not a cache exits 3 and names a cache one level down")
    func mergeOfNonCache() async throws {
        let (_, list) = try await listWithDeadURL()
        _ = try await sdfetch([list], cacheDirectory: directory.appending("shard-0/cache-0"))
        let run = try await sdfetch(["merge", directory.appending("shard-0")])
        #expect(run.status == 3)
        #expect(run.standardError.contains("is not a cache directory"))
        #expect(run.standardError.contains("a cache sits one level down: did you mean "))
        #expect(run.standardError.contains("shard-0/cache-0"))
        try FileManager.default.createDirectory(atPath: directory.appending("empty"), withIntermediateDirectories: true)
        #expect(try await sdfetch(["merge", directory.appending("empty")]).status == 3)
        #expect(try await sdfetch(["merge", directory.appending("shard-0/cache-0")]).status == 0)
    }

    // MARK: - Messages

    @Test(
        "--offline on an entry whose file changed says the bytes changed; on one verify or clean removed, that it is not cached"
    )
    func offlineChangedBytes() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let list = directory.write(server.url("/a.png") + "\n", to: "l")
        let fetched = try await sdfetch(["--json", list])
        let path = try #require(
            (try JSONSerialization.jsonObject(with: Data(fetched.standardOutput.utf8)) as? [String: Any])?["path"]
                as? String)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let run = try await sdfetch(["--offline", list])
        #expect(run.status == 1)
        #expect(run.standardError.contains("offline-miss: the cached file's bytes changed"), "\(run.standardError)")
        let missing = try await sdfetch(["--offline", server.url("/other.png")])
        #expect(missing.standardError.contains("offline-miss: not in the cache"))
        // Removed within the hour its line is kept for: not in the cache either.
        #expect(try await sdfetch(["verify"]).standardOutput.contains("bytes differ"))
        let verified = try await sdfetch(["--offline", list])
        #expect(verified.standardError.contains("offline-miss: not in the cache"), "\(verified.standardError)")
        #expect(try await sdfetch(["-q", list]).status == 0)
        #expect(try await sdfetch(["clean", "--max-size", "1"]).status == 0)
        let cleaned = try await sdfetch(["--offline", list])
        #expect(cleaned.standardError.contains("offline-miss: not in the cache"), "\(cleaned.standardError)")
    }

    @Test("an HTML page served as 200 fails as not-an-image naming the type the server sent")
    func htmlPageNamesItsType() async throws {
        let server = try await LoopbackServer()
        let page = Array("<!doctype html><title>Sign in</title>".utf8)
        server.route("/a.png", .ok(page, headers: [("Content-Type", "text/html; charset=utf-8")]))
        let run = try await sdfetch([server.url("/a.png")])
        #expect(run.status == 1)
        let expected = "not-an-image: no known image signature: the server sent text/html"
        #expect(run.standardError.contains(expected), "\(run.standardError)")
    }

    @Test("a CSV piped without --input-format gets a hint, once")
    func csvHint() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png()))
        let table = "url,caption\n\(server.url("/a.png")),a cat\nnot a url,x\n"
        let run = try await sdfetch(["-"], input: table)
        #expect(run.standardError.contains("hint: standard input looks like a CSV table"), "\(run.standardError)")
        #expect(run.standardError.components(separatedBy: "hint:").count == 2)
        #expect(run.standardError.contains("--input-format csv"))
        let told = try await sdfetch(["--input-format", "csv", "-"], input: table)
        #expect(!told.standardError.contains("hint:"))
    }

    @Test("requests counts what is sent: redirect hops and retries after 429")
    func requestsCountsEverySend() async throws {
        let server = try await LoopbackServer()
        server.route("/moved.png", .redirect(to: "/a.png"))
        server.route("/a.png", .ok(SampleImages.png()))
        server.route(
            "/busy.png", .status(429, headers: [("Retry-After", "0")]), .ok(SampleImages.png(seed: 2)))
        let list = directory.write(server.url("/moved.png") + "\n" + server.url("/busy.png") + "\n", to: "l")
        let summary = directory.appending("summary.json")
        let run = try await sdfetch(["--summary", summary, list])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        #expect(server.totalRequests == 4)
        #expect(object["requests"] as? Int == server.totalRequests)
        #expect((object["received_bytes"] as? Int ?? 0) >= 2 * SampleImages.png().count)
    }

    @Test("an interrupted run reports the bytes and requests it made, and calls no host slow for what it cut")
    func interruptedRunCounts() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<4).map { "/trickle\($0).png" }
        let body = [UInt8](repeating: 7, count: 1 << 20)
        for path in paths {
            server.route(
                path, ScriptedResponse(body: body, behavior: .trickled(chunk: 4096, interval: .milliseconds(100))))
        }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let summary = directory.appending("summary.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--cache-dir", cache, "--summary", summary, list]
        let stderr = directory.write("", to: "err.txt")
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: stderr)
        try process.run()
        let pid = process.processIdentifier
        // Each transfer has run past a second (13 chunks sent) when the signal goes.
        await onOwnThread {
            let deadline = ContinuousClock.now + .seconds(20)
            while paths.contains(where: { server.bytesSent(for: $0) < 13 * 4096 }), ContinuousClock.now < deadline {
                usleep(1000)
            }
            kill(pid, SIGINT)
        }
        await process.exited()
        #expect(process.terminationStatus == 130)
        let errors = try String(contentsOfFile: stderr, encoding: .utf8)
        #expect(errors.contains("sdfetch: interrupted after") && !errors.contains(" 0 B downloaded"), "\(errors)")
        #expect(!errors.contains("slow host"), "\(errors)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        #expect(object["requests"] as? Int == 4)
        #expect((object["received_bytes"] as? Int ?? 0) > 4 * 4096)
    }

    @Test("an opted-out image's line names --ignore-opt-outs")
    func optOutNamesTheOverride() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(), headers: [("X-Robots-Tag", "noai")]))
        let first = try await sdfetch([server.url("/a.png")])
        #expect(first.standardError.contains("opted-out"))
        #expect(first.standardError.contains("(store it anyway: --ignore-opt-outs)"))
        let second = try await sdfetch([server.url("/a.png")])
        #expect(second.standardError.contains("(fetch it anyway: --ignore-opt-outs --retry-failed)"))
    }
}
