import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// What a server is sent, and what it sent is replayed to, across redirects and proxies:
/// credentials and validators stay with the origin they belong to.
@Suite("credentials and validators stay with their origin", .cleansUp, .timeLimit(.minutes(1)))
struct RedirectTrustTests {
    let directory = TemporaryDirectory("redirect-trust")

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.sdfetch(arguments, input: input)
    }

    private let headers = [
        "-H", "X-Api-Key: K", "-H", "Proxy-Authorization: Basic cHJveHk6cHc=", "-H", "Authorization: Bearer T",
        "-H", "Cookie: c=1",
    ]

    @Test("on a redirect to another port, -H headers and credential headers are dropped")
    func crossOriginRedirectDropsHeaders() async throws {
        let origin = try await LoopbackServer()
        let other = try await LoopbackServer()
        origin.route("/r.png", .redirect(to: other.url("/b.png")))
        origin.route("/same.png", .redirect(to: "/a.png"))
        origin.route("/a.png", .ok(SampleImages.png(seed: 1)))
        other.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let input = [origin.url("/r.png"), origin.url("/same.png")].joined(separator: "\n")
        let run = try await sdfetch(["--cache-dir", directory.appending("cache")] + headers, input: input)

        #expect(run.status == 0)
        let first = try #require(origin.recordedRequests(for: "/r.png").first)
        #expect(first.header("X-Api-Key") == "K" && first.header("Authorization") == "Bearer T")
        #expect(first.header("Proxy-Authorization") == nil)
        let hop = try #require(other.recordedRequests(for: "/b.png").first)
        for name in ["X-Api-Key", "Proxy-Authorization", "Authorization", "Cookie"] { #expect(hop.header(name) == nil) }
        #expect(hop.header("Accept") != nil)
        // A hop on the same origin keeps them.
        let sameHop = try #require(origin.recordedRequests(for: "/a.png").first)
        #expect(sameHop.header("X-Api-Key") == "K" && sameHop.header("Cookie") == "c=1")
    }

    @Test("--location-trusted keeps -H headers on a redirect to another port")
    func locationTrustedKeepsHeaders() async throws {
        let origin = try await LoopbackServer()
        let other = try await LoopbackServer()
        origin.route("/r.png", .redirect(to: other.url("/b.png")))
        other.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let run = try await sdfetch(
            ["--cache-dir", directory.appending("cache"), "--location-trusted"] + headers, input: origin.url("/r.png"))

        #expect(run.status == 0)
        let hop = try #require(other.recordedRequests(for: "/b.png").first)
        #expect(hop.header("X-Api-Key") == "K" && hop.header("Authorization") == "Bearer T")
        #expect(hop.header("Proxy-Authorization") == nil)
    }

    @Test("a validator with a control character is never stored nor sent back")
    func validatorWithControlCharacter() async throws {
        let png = SampleImages.png(seed: 4)
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nETag: \"abc\"\rX-Injected: yes\r\n"
            + "Content-Length: \(png.count)\r\nConnection: close\r\n\r\n"
        let raw = try await RawResponseServer([.init(Array(head.utf8) + png)])
        let cache = directory.appending("cache")
        let first = try await sdfetch(["--cache-dir", cache, "-v"], input: raw.url("/a.png"))
        let second = try await sdfetch(["--cache-dir", cache, "-v", "--refresh"], input: raw.url("/a.png"))

        #expect(first.status == 0 && second.status == 0)
        #expect(!second.standardError.contains("revalidating"))
    }

    @Test("validators of the host a redirect led to are not replayed to the first host")
    func validatorsStayWithTheirHost() async throws {
        let origin = try await LoopbackServer()
        let other = try await LoopbackServer()
        origin.route("/r.png", .redirect(to: other.url("/b.png")))
        other.route(
            "/b.png",
            .ok(
                SampleImages.png(seed: 5),
                headers: [("ETag", "\"from-b\""), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")]))
        let cache = directory.appending("cache")
        _ = try await sdfetch(["--cache-dir", cache], input: origin.url("/r.png"))
        let again = try await sdfetch(
            ["--cache-dir", cache, "--refresh", "-H", "Authorization: Bearer T"], input: origin.url("/r.png"))

        #expect(again.status == 0)
        let requests = origin.recordedRequests(for: "/r.png")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.header("If-None-Match") == nil && $0.header("If-Modified-Since") == nil })
    }

    @Test("a proxy answering 407, or refusing CONNECT, fails the URL as transient: nothing is blacklisted")
    func proxyRefusalIsTransient() async throws {
        let refusing = try await RawResponseServer([
            .init("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        ])
        let cache = directory.appending("cache")
        let run = try await sdfetch(
            ["--cache-dir", cache, "--json", "--retries", "0", "--proxy", "http://127.0.0.1:\(refusing.port)"],
            input: "http://127.0.0.1:9/a.png\nhttps://127.0.0.1:9/b.png\n")
        let failed = try await sdfetch(["failed", "list", "--cache-dir", cache])

        #expect(run.status == 1)
        #expect(run.standardOutput.contains("\"error\":\"http-407\""))
        #expect(run.standardOutput.contains("\"error\":\"connect\""))
        #expect(failed.status == 0 && failed.standardOutput.isEmpty)
    }
}
