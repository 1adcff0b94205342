import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--remote-cache` in the built binary, against a real nginx with WebDAV `PUT`: a second
/// runner served from the remote, the counts on stderr and in `--summary`, `-v` naming
/// the remote, one warning for a remote that is down, and no password in any output.
@Suite(
    "remote cache in the binary", .cleansUp, .timeLimit(.minutes(1)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: LocalNginx.binary), "nginx is not installed"))
struct RemoteCacheCommandTests {
    let directory = TemporaryDirectory("remote-command")

    @Test("a second runner is served by the remote: counted, named by -v and --json, password masked")
    func secondRunner() async throws {
        let origin = try await LoopbackServer()
        let urls = (0..<3).map { origin.url("/\($0).png") }
        for index in 0..<3 { origin.route("/\(index).png", .ok(SampleImages.png(seed: index))) }
        let list = directory.write(urls.joined(separator: "\n"), to: "list.txt")
        let nginx = try await LocalNginx.startRemoteCache(directory: directory.appending("nginx"))
        let remote = "http://fleet:s3cret@127.0.0.1:\(nginx.port)/cache"
        let first = try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("a"), "--remote-cache", remote, "--summary", "-", list])
        #expect(first.status == 0)
        #expect(first.standardError.contains("remote cache: 0 hits, 3 missed, 3 uploaded, 0 errors"))
        #expect(nginx.storedNames(in: "cache/ac").count == 3)

        let second = try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("b"), "--remote-cache", remote, "--summary", "-", "-v", "--json", list])
        #expect(second.status == 0)
        let lines = second.standardOutput.split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains(#""status":"cached""#) })
        let masked = "http://fleet:***@127.0.0.1:\(nginx.port)/cache"
        #expect(lines.allSatisfy { $0.contains(#""remote":"\#(masked)""#) })
        #expect(second.standardError.contains("served by the remote cache \(masked)"))
        #expect(second.standardError.contains("remote cache: 3 hits, 0 missed, 0 uploaded, 0 errors"))
        #expect(
            second.standardError.contains(#""remote":{"errors":0,"hits":3,"misses":0,"skipped_uploads":0,"uploads":0}"#)
        )
        #expect(origin.totalRequests == 3)
        #expect(!(first.standardError + second.standardError + second.standardOutput).contains("s3cret"))
    }

    @Test("a remote that is down is one warning naming it, and the run succeeds")
    func downRemoteWarns() async throws {
        let origin = try await LoopbackServer()
        origin.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let gone = try await LoopbackServer()
        let port = gone.port
        try await gone.shutdown()
        let run = try await ProcessRun.sdfetch(
            [
                "--cache-dir", directory.appending("cache"), "--remote-cache", "http://u:pw@127.0.0.1:\(port)/c",
                origin.url("/a.png"),
            ])
        #expect(run.status == 0 && run.standardOutput.hasPrefix("downloaded"))
        let warnings = run.standardError.split(separator: "\n").filter {
            $0.hasPrefix("sdfetch: warning: remote cache")
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("http://u:***@127.0.0.1:\(port)/c switched off") == true)
        #expect(!run.standardError.contains("pw@"))
    }
}
