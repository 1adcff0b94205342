import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// No password reaches the terminal, `--json`, `--summary` or a usage error in clear: every
/// `-v` path, curl's proxy errors and mangled input lines, against the built binary.
@Suite("passwords are masked everywhere", .cleansUp, .timeLimit(.minutes(1)))
struct CredentialMaskingTests {
    let directory = TemporaryDirectory("masking")

    private func sdfetch(
        _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws
        -> ProcessRun
    {
        try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--no-config", "--progress", "never"] + arguments, input: input,
            environment: environment)
    }

    private func everything(_ run: ProcessRun) -> String { run.standardOutput + run.standardError }

    @Test("a proxy's password is masked in the usage error, the failed line, JSON, -v and --summary")
    func proxyPassword() async throws {
        let refused = try await sdfetch(
            ["--cache-dir", directory.appending("cache"), "--proxy", "foo://user:PXSECRET@127.0.0.1:9"],
            input: "http://127.0.0.1:9/p.png\n")
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("user:***@127.0.0.1:9") && !everything(refused).contains("PXSECRET"))

        let summary = directory.appending("summary.json")
        let arguments = [
            "--cache-dir", directory.appending("cache"), "--proxy", "http://user:PXSECRET@127.0.0.1:9", "-v",
            "--retries", "1", "--summary", summary,
        ]
        let text = try await sdfetch(arguments, input: "http://127.0.0.1:9/p.png\n")
        let json = try await sdfetch(arguments + ["--json"], input: "http://127.0.0.1:9/p.png\n")
        #expect(text.status == 1 && json.status == 1)
        for run in [text, json] { #expect(!everything(run).contains("PXSECRET")) }
        #expect(!(try String(contentsOfFile: summary, encoding: .utf8)).contains("PXSECRET"))
    }

    @Test("a password in http_proxy is masked in the failure")
    func environmentProxyPassword() async throws {
        let run = try await sdfetch(
            ["--cache-dir", directory.appending("cache"), "--json", "-v", "--retries", "0"],
            input: "http://127.0.0.1:9/p.png\n", environment: ["http_proxy": "socks9://u:ENVSECRET@127.0.0.1:9"])

        #expect(run.status == 1)
        #expect(!everything(run).contains("ENVSECRET"))
        #expect(everything(run).contains("u:***@"))
    }

    @Test("a malformed --proxy is refused without printing its password")
    func malformedProxyUsageError() async throws {
        let run = try await sdfetch(["--proxy", "http://user:PXSECRET@127.0.0.1:9/\u{1}", "http://127.0.0.1:9/a.png"])

        #expect(run.status == 2)
        #expect(!run.standardError.contains("PXSECRET"))
        #expect(run.standardError.contains("user:***@"))
    }

    @Test("every -v note (retry, redirect to a URL with a password, revalidation) masks the password")
    func verboseNotes() async throws {
        let server = try await LoopbackServer()
        let port = server.port
        server.route("/status/503?v=1", .status(503), .ok(SampleImages.png(seed: 1)))
        server.route("/r?to=/img/rel.png", .redirect(to: "http://alice:LOCSECRET@127.0.0.1:\(port)/img/rel.png"))
        server.route("/img/rel.png", .ok(SampleImages.png(seed: 2)))
        server.route(
            "/etag.png", .ok(SampleImages.png(seed: 3), headers: [("ETag", "\"v1\"")]),
            .status(304, headers: [("ETag", "\"v1\"")]))
        let urls = ["/status/503?v=1", "/r?to=/img/rel.png", "/etag.png"].map {
            "http://alice:S3CRET@127.0.0.1:\(port)\($0)"
        }
        let list = directory.write(urls.joined(separator: "\n") + "\n", to: "list.txt")
        let cache = directory.appending("cache")
        let first = try await sdfetch(["-v", "--retries", "1", "--cache-dir", cache, list])
        let second = try await sdfetch(["-v", "--refresh", "--json", "--cache-dir", cache, list])

        #expect(first.status == 0 && second.status == 0)
        for run in [first, second] {
            #expect(!everything(run).contains("S3CRET") && !everything(run).contains("LOCSECRET"))
        }
        #expect(first.standardError.contains("alice:***@127.0.0.1:\(port)/status/503?v=1: http-503"))
        #expect(first.standardError.contains("followed 1 redirect to http://alice:***@127.0.0.1:\(port)/img/rel.png"))
        #expect(second.standardError.contains("304 not modified"))
    }

    @Test("invalid lines mask what looks like a password, however the URL is mangled")
    func invalidLines() async throws {
        let lines = [
            "https:/alice:SECRET1@h/x.png", "//alice:SECRET2@h/x.png", "http://alice:pa/SECRET3@h/x.png",
            "http://alice:p#SECRET4@h/x.png", "http://alice:p?SECRET5@h/x.png",
        ]
        let text = try await sdfetch(
            ["--cache-dir", directory.appending("cache")], input: lines.joined(separator: "\n"))
        let json = try await sdfetch(
            ["--cache-dir", directory.appending("cache"), "--json"], input: lines.joined(separator: "\n"))

        for run in [text, json] {
            #expect(!everything(run).contains("SECRET"))
            #expect(everything(run).contains("alice:***@h/x.png"))
        }
    }
}
