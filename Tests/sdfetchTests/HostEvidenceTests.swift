import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// What one run's host health leaves the next (README "Dead and slow hosts", the man page's
/// MANY HOSTS): only evidence about the host itself, per origin.
@Suite("Host memory across runs, end to end", .cleansUp, .timeLimit(.minutes(2)))
struct HostEvidenceTests {
    let directory = TemporaryDirectory("host-evidence")

    private func run(_ urls: [String], _ extra: [String] = []) async throws -> ProcessRun {
        let list = directory.write(urls.joined(separator: "\n"), to: "list")
        return try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("cache"), "--json", "-t", "1"] + extra + [list])
    }

    private func errors(_ run: ProcessRun) -> [String] {
        run.standardOutput.split(separator: "\n").map { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["error"] as? String ?? object?["status"] as? String ?? String(line)
        }
    }

    @Test("one slow URL is its own timeout: the next run asks the host again and gets its images")
    func oneSlowURLIsNotRemembered() async throws {
        let server = try await LoopbackServer()
        var slow = ScriptedResponse.ok(SampleImages.png(seed: 1))
        slow.delay = .seconds(3)
        server.route("/render/slow.png", slow)
        server.route("/fast.png", .ok(SampleImages.png(seed: 2)))

        let first = try await run([server.url("/render/slow.png")])
        let second = try await run([server.url("/fast.png")])

        #expect(errors(first) == ["timeout"], "\(first.standardOutput)")
        #expect(errors(second) == ["downloaded"], "\(second.standardOutput)\(second.standardError)")
        #expect(server.requests(for: "/fast.png") == 1)
    }

    @Test("two URLs silent after connecting are evidence: the next run dials the host no more")
    func twoSilentURLsAreRemembered() async throws {
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let first = try await run([silent.url("/a.png"), silent.url("/b.png")])
        let connections = silent.connections
        let second = try await run([silent.url("/c.png")])

        #expect(first.status == 1)
        #expect(errors(first).sorted() == ["timeout", "timeout"], "\(first.standardOutput)")
        #expect(errors(second) == ["host-down"], "\(second.standardOutput)")
        #expect(second.standardOutput.contains("found down"))
        #expect(silent.connections == connections)
    }

    @Test("a silent port is its origin's: the same host's other scheme is still dialled")
    func memoryIsPerOrigin() async throws {
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let first = try await run([silent.url("/a.png"), silent.url("/b.png")])
        let connections = silent.connections
        // The same host and port under https: another origin, asked (its handshake times out).
        let second = try await run(["https://127.0.0.1:\(silent.port)/c.png"])

        #expect(errors(first).sorted() == ["timeout", "timeout"], "\(first.standardOutput)")
        #expect(errors(second) == ["timeout"], "\(second.standardOutput)")
        #expect(silent.connections > connections)
        // The http origin itself is still remembered, and named as such.
        let third = try await run([silent.url("/d.png")])
        #expect(errors(third) == ["host-down"], "\(third.standardOutput)")
        #expect(third.standardOutput.contains("http://127.0.0.1:\(silent.port) is down"), "\(third.standardOutput)")
    }

    @Test("a host --retry-failed finds answering is forgotten: the next run asks it again")
    func answeringHostIsForgotten() async throws {
        let server = try await LoopbackServer()
        var slow = ScriptedResponse.ok(SampleImages.png(seed: 3))
        slow.delay = .seconds(3)
        for name in ["a", "b"] { server.route("/render/\(name).png", slow) }
        for name in ["c", "d", "e"] { server.route("/\(name).png", .ok(SampleImages.png(seed: 4))) }

        // Two URLs silent at once: evidence, remembered; the next run sends nothing.
        let silent = try await run([server.url("/render/a.png"), server.url("/render/b.png")])
        let remembered = try await run([server.url("/c.png")])
        let retried = try await run([server.url("/d.png")], ["--retry-failed"])
        let after = try await run([server.url("/e.png")])

        #expect(errors(silent).sorted() == ["timeout", "timeout"], "\(silent.standardOutput)")
        #expect(errors(remembered) == ["host-down"], "\(remembered.standardOutput)")
        #expect(errors(retried) == ["downloaded"], "\(retried.standardOutput)")
        #expect(errors(after) == ["downloaded"], "\(after.standardOutput)")
    }
}
