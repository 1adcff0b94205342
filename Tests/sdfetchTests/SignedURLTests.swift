import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--key-ignore-query` with the built binary: presigned variants of one URL are one image.
@Suite("sdfetch --key-ignore-query, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct SignedURLTests {
    let directory = TemporaryDirectory("signed")

    /// An S3-style presigned path: the object, a kept `versionId`, and a signature of `run`.
    private func presigned(_ run: Int) -> String {
        "/bucket/cat.png?versionId=7&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=2026112\(run)T000000Z"
            + "&X-Amz-Expires=900&X-Amz-Signature=\(String(repeating: "\(run)", count: 64))"
    }

    @Test("signed variants hit the cache, and the request still carries the parameters")
    func variantsHit() async throws {
        let server = try await LoopbackServer()
        for run in 1...3 { server.route(presigned(run), .ok(SampleImages.png(seed: 5))) }
        let cache = directory.appending("cache")
        var statuses: [String] = []
        var keys: [String] = []
        for run in 1...3 {
            let list = directory.write(server.url(presigned(run)), to: "list\(run)")
            let result = try await ProcessRun.sdfetch(
                ["--cache-dir", cache, "--json", "--key-ignore-query", "X-Amz-*", list])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            statuses.append(object["status"] as? String ?? "")
            keys.append(object["key"] as? String ?? "")
        }
        let sent = try #require(server.recordedRequests.first).path

        #expect(statuses == ["downloaded", "cached", "cached"])
        #expect(server.totalRequests == 1)
        #expect(sent == presigned(1))
        #expect(Set(keys) == [server.url("/bucket/cat.png?versionId=7")])
    }

    @Test("within one run, variants are one key: one request, the others duplicates")
    func variantsCoalesce() async throws {
        let server = try await LoopbackServer()
        for run in 1...3 { server.route(presigned(run), .ok(SampleImages.png(seed: 6))) }
        let list = directory.write((1...3).map { server.url(presigned($0)) }.joined(separator: "\n"), to: "list")
        let result = try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("cache"), "--key-ignore-query", "x-amz-*", list])

        #expect(result.status == 0)
        #expect(server.totalRequests == 1)
        #expect(result.standardOutput.split(separator: "\n").count == 1)
    }

    @Test("without the option every signature is its own key, and the config file can set it")
    func optionAndConfig() async throws {
        let server = try await LoopbackServer()
        for run in 1...2 { server.route(presigned(run), .ok(SampleImages.png(seed: 7))) }
        let list = directory.write((1...2).map { server.url(presigned($0)) }.joined(separator: "\n"), to: "list")
        let plain = try await ProcessRun.sdfetch(["--cache-dir", directory.appending("plain"), list])
        let requestsWithout = server.totalRequests
        let config = directory.write(
            "key-ignore-query = X-Amz-Signature\nkey-ignore-query = X-Amz-Date\n", to: "config")
        let configured = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--config", config, "--progress", "never", "--cache-dir", directory.appending("configured"), list])

        #expect(plain.status == 0 && configured.status == 0)
        #expect(requestsWithout == 2)
        #expect(server.totalRequests == 3)
    }

    @Test("the README's signed-URL config, pasted with its comments, warms the cache")
    func readmeConfigAsPasted() async throws {
        let server = try await LoopbackServer()
        for run in 1...2 { server.route(presigned(run), .ok(SampleImages.png(seed: 9))) }
        let config = directory.write(try ReadmeBlocks.block(startingWith: "# ~/.config/sdfetch/config"), to: "config")
        var statuses: [String] = []
        for run in 1...2 {
            let result = try await ProcessRun.launch(
                BuiltProduct.path("sdfetch"),
                [
                    "--config", config, "--progress", "never", "--cache-dir", directory.appending("cache"),
                    server.url(presigned(run)),
                ])
            statuses.append(String(result.standardOutput.prefix { $0 != "\t" }))
        }
        #expect(statuses == ["downloaded", "cached"])
        #expect(server.totalRequests == 1)
    }

    @Test("-v names a pattern that matched no parameter in the run, and only that one")
    func unmatchedPatternNamed() async throws {
        let server = try await LoopbackServer()
        server.route(presigned(1), .ok(SampleImages.png(seed: 10)))
        let result = try await ProcessRun.sdfetch(
            [
                "--cache-dir", directory.appending("cache"), "-v", "--key-ignore-query", "X-Amz-*",
                "--key-ignore-query", "X-Goog-*", server.url(presigned(1)),
            ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("--key-ignore-query 'X-Goog-*' matched no query parameter in this run"))
        #expect(!result.standardError.contains("'X-Amz-*' matched no"))
        let quiet = try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("cache"), "--key-ignore-query", "X-Goog-*", server.url(presigned(1))])
        #expect(!quiet.standardError.contains("matched no"), "only under -v")
    }

    @Test("a stale signature's 400 records nothing, and the unsigned URL's 403 never skips a signed one")
    func signedFailuresAreNotRecorded() async throws {
        let server = try await LoopbackServer()
        server.route(presigned(1), .status(400))
        server.route(presigned(2), .ok(SampleImages.png(seed: 8)))
        server.route("/bucket/cat.png?versionId=7", .status(403))
        func status(_ path: String, cache: String) async throws -> String {
            let list = directory.write(server.url(path), to: "list")
            let result = try await ProcessRun.sdfetch(
                ["--cache-dir", directory.appending(cache), "--json", "--key-ignore-query", "X-Amz-*", list])
            let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            return object?["status"] as? String ?? result.standardOutput
        }

        // An expired signature (GCS and S3 answer 400), then a fresh one of the same object.
        #expect(try await status(presigned(1), cache: "stale") == "failed")
        #expect(try await status(presigned(2), cache: "stale") == "downloaded")
        // A private bucket's 403 to the unsigned URL is its own: it skips that URL only.
        #expect(try await status("/bucket/cat.png?versionId=7", cache: "private") == "failed")
        #expect(try await status("/bucket/cat.png?versionId=7", cache: "private") == "skipped")
        #expect(try await status(presigned(2), cache: "private") == "downloaded")
        #expect(server.totalRequests == 4)
    }
}
