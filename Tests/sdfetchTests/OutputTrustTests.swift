import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@testable import sdfetch

/// Trust at the edges of the command line: `--name` folders, escaping of what was typed,
/// the config file and `--cacert`.
@Suite("output names, config file and option files are not trusted blindly", .cleansUp, .timeLimit(.minutes(1)))
struct OutputTrustTests {
    let directory = TemporaryDirectory("output-trust")

    private func sdfetch(
        _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws
        -> ProcessRun
    {
        try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments, input: input, environment: environment)
    }

    @Test("--name {path}: one URL's file name never becomes another's folder, in either order")
    func pathFoldersNeverTakeFileNames() async throws {
        let server = try await LoopbackServer()
        let plain = server.url("/v.png?s=1.5")
        let hash = try URLKey(parsing: plain).digest.shortHex
        let nested = server.url("/v-\(hash).png/e.png")
        server.route("/v.png?s=1.5", .ok(SampleImages.png(seed: 1)))
        server.route("/v-\(hash).png/e.png", .ok(SampleImages.png(seed: 2)))
        for (index, order) in [[plain, nested], [nested, plain]].enumerated() {
            let run = try await sdfetch(
                [
                    "--no-config", "-j", "1", "--cache-dir", directory.appending("cache\(index)"), "-o",
                    directory.appending("out\(index)"), "--name", "{path}/{stem}{ext}",
                ], input: order.joined(separator: "\n"))
            #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        }
    }

    @Test("--name {path} bounds the depth of folders")
    func pathDepthIsBounded() async throws {
        let server = try await LoopbackServer()
        let path = "/" + String(repeating: "a/", count: 3000) + "e.png"
        server.route(path, .ok(SampleImages.png(seed: 3)))
        let run = try await sdfetch(
            [
                "--no-config", "--cache-dir", directory.appending("cache"), "-o", directory.appending("out"), "--name",
                "{path}/{stem}{ext}",
            ], input: server.url(path))

        #expect(run.status == 0, "\(run.standardError)")
        let written = try #require(run.standardOutput.split(separator: "\t").dropFirst().first)
        #expect(written.split(separator: "/").count < directory.appending("out").split(separator: "/").count + 20)
    }

    @Test("the last bidi control, U+061C, is escaped, and --name errors escape what was typed")
    func escaping() async throws {
        #expect(Escaping.terminal("a\u{061C}b") == "a\\u{061c}b")
        let run = try await sdfetch(["--no-config", "--name", "{\u{1B}[31m}x", "http://127.0.0.1:9/a.png"])
        #expect(run.status == 2 && !run.standardError.contains("\u{1B}"))
        let unclosed = try await sdfetch(["--no-config", "--name", "\u{1B}[31m{x", "http://127.0.0.1:9/a.png"])
        #expect(unclosed.status == 2 && !unclosed.standardError.contains("\u{1B}"))
    }

    @Test("a config file writable by every user is refused, not read")
    func worldWritableConfig() async throws {
        try FileManager.default.createDirectory(
            atPath: directory.appending("sdfetch"), withIntermediateDirectories: true)
        let config = directory.write("insecure\n", to: "sdfetch/config")
        chmod(config, 0o666)
        let run = try await sdfetch(
            ["--cache-dir", directory.appending("cache")], input: "http://127.0.0.1:9/a.png\n",
            environment: ["XDG_CONFIG_HOME": directory.path])
        chmod(config, 0o644)
        let fine = try await sdfetch(
            ["--cache-dir", directory.appending("cache"), "--retries", "0"], input: "http://127.0.0.1:9/a.png\n",
            environment: ["XDG_CONFIG_HOME": directory.path])

        #expect(run.status == 2 && run.standardError.contains("writable by every user"))
        #expect(fine.status == 1)
    }

    @Test("--cacert naming a FIFO is refused at once instead of blocking")
    func caCertificateFIFO() async throws {
        let fifo = directory.appending("ca.pem")
        #expect(mkfifo(fifo, 0o600) == 0)
        let run = try await sdfetch(["--no-config", "--cacert", fifo, "https://127.0.0.1:9/a.png"])

        #expect(run.status == 2 && run.standardError.contains("not a regular file"))
    }
}
