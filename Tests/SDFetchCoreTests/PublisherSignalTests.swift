import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// What a server says about its own bytes: an `X-Robots-Tag` opt-out from AI use, and a
/// `Content-Digest`/`Repr-Digest` the body must match.
@Suite("Publisher signals", .cleansUp, .timeLimit(.minutes(1)))
struct PublisherSignalTests {
    let directory = TemporaryDirectory("publisher-signals")

    private func fetcher(_ configure: (inout FetchOptions) -> Void = { _ in }) throws -> Fetcher {
        try Fetcher.forTesting(in: directory, configure)
    }

    @Test(
        "X-Robots-Tag opts out when bare or scoped to sdfetch or *, not when scoped to another agent",
        arguments: [
            ("noai", true), ("noindex, noimageai", true), ("sdfetch: noai", true), ("SDFetch: NoImageAI", true),
            ("*: noai", true), ("otherbot: noai", false), ("noindex, nofollow", false),
            ("max-snippet: 20, noai", true), ("noindex, sdfetch: noai", true),
            ("googlebot: noindex, *: noimageai, nofollow", true), ("otherbot: noindex, noai", false),
            ("sdfetch: noindex, otherbot: noai", false),
            ("unavailable_after: Wed, 03 Nov 2027 15:00:00 GMT, noai", true),
        ])
    func robotsTag(value: String, optsOut: Bool) async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1), headers: [("X-Robots-Tag", value)]))
        let result = try await fetcher().fetch(url: server.url("/a.png"))

        if optsOut {
            #expect(result.status == .failed)
            #expect(result.failure?.kind == .optedOut)
            #expect(result.failure?.kind.label == "opted-out")
        } else {
            #expect(result.status == .downloaded)
        }
    }

    @Test("an opted-out image is not stored and is recorded like a permanent failure")
    func optOutIsRecorded() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 2), headers: [("X-Robots-Tag", "noai")]))
        let first = try await fetcher().fetch(url: server.url("/a.png"))
        let again = try await fetcher().fetch(url: server.url("/a.png"))

        #expect(first.failure?.kind == .optedOut)
        #expect(first.path == nil)
        #expect(again.status == .skipped)
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("a 304 that opts out does not renew the entry: opted-out, and recorded")
    func optOutOnNotModified() async throws {
        let server = try await LoopbackServer()
        let clock = ManualClock()
        server.route(
            "/a.png", .ok(SampleImages.png(seed: 6), headers: [("ETag", "\"v1\"")]),
            ScriptedResponse(status: 304, headers: [("ETag", "\"v1\""), ("X-Robots-Tag", "noindex, noimageai")]))
        let fetch = { try await Fetcher.forTesting(in: directory, now: clock.read).fetch(url: server.url("/a.png")) }
        #expect(try await fetch().status == .downloaded)
        clock.advance(by: .seconds(7 * 86400))
        let revalidated = try await fetch()
        let again = try await fetch()

        #expect(revalidated.status == .failed && revalidated.failure?.kind == .optedOut)
        #expect(revalidated.httpStatus == 304)
        #expect(again.status == .skipped)
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("--ignore-opt-outs stores the image")
    func ignoreOptOuts() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 3), headers: [("X-Robots-Tag", "noai, noimageai")]))
        let result = try await fetcher { $0.ignoreOptOuts = true }.fetch(url: server.url("/a.png"))

        #expect(result.status == .downloaded)
    }

    @Test("a body that differs from its Content-Digest is hash-mismatch, neither stored nor recorded")
    func digestMismatch() async throws {
        let server = try await LoopbackServer()
        let wrong = Data(SHA256.hash(data: [1, 2, 3])).base64EncodedString()
        server.route("/a.png", .ok(SampleImages.png(seed: 4), headers: [("Content-Digest", "sha-256=:\(wrong):")]))
        let first = try await fetcher().fetch(url: server.url("/a.png"))
        let again = try await fetcher().fetch(url: server.url("/a.png"))

        #expect(first.failure?.kind == .hashMismatch)
        #expect(first.failure?.kind.label == "hash-mismatch")
        #expect(first.path == nil)
        #expect(again.failure?.kind == .hashMismatch)
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("a body that matches its Repr-Digest is stored")
    func digestMatch() async throws {
        let server = try await LoopbackServer()
        let body = SampleImages.png(seed: 5)
        let digest = Data(SHA256.hash(data: body)).base64EncodedString()
        server.route("/a.png", .ok(body, headers: [("Repr-Digest", "sha-512=:AAAA:, sha-256=:\(digest):")]))
        let result = try await fetcher().fetch(url: server.url("/a.png"))

        #expect(result.status == .downloaded)
        #expect(result.sha256 == body.sha256Hex)
    }
}

extension [UInt8] {
    fileprivate var sha256Hex: String { SHA256.hash(data: self).map { String(format: "%02x", $0) }.joined() }
}
