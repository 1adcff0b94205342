import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// `--retries`, backoff, `Retry-After` and `--host-failures`, seen from the server.
///
/// Backoff is configured in milliseconds here; only `Retry-After` tests wait a real second.
@Suite("Retries and host health", .cleansUp, .timeLimit(.minutes(1)))
struct RetryTests {
    let directory = TemporaryDirectory("retries")

    private func fetcher(_ configure: (inout FetchOptions) -> Void = { _ in }) throws -> Fetcher {
        try Fetcher.forTesting(in: directory, configure)
    }

    // MARK: - Retries

    @Test("a 503 then OK succeeds with exactly two requests")
    func serviceUnavailableThenOK() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .status(503), .ok(SampleImages.png()))
        let fetcher = try fetcher()
        let result = try await fetcher.fetch(url: server.url("/a.png"))

        #expect(result.status == .downloaded)
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("retries stop after --retries extra tries and report the last failure")
    func retriesAreBounded() async throws {
        let server = try await LoopbackServer()
        server.route("/down.png", .status(503))
        let fetcher = try fetcher { $0.retries = 2 }
        let result = try await fetcher.fetch(url: server.url("/down.png"))

        #expect(result.failure?.kind == .http(503))
        #expect(server.requests(for: "/down.png") == 3)
    }

    @Test("a permanent failure is not retried")
    func permanentFailureIsNotRetried() async throws {
        let server = try await LoopbackServer()
        server.route("/gone.png", .status(410))
        let fetcher = try fetcher { $0.retries = 3 }
        let result = try await fetcher.fetch(url: server.url("/gone.png"))

        #expect(result.failure?.kind == .http(410))
        #expect(server.requests(for: "/gone.png") == 1)
    }

    @Test("a truncated body is retried like any transient failure")
    func truncatedIsRetried() async throws {
        let server = try await LoopbackServer()
        let body = SampleImages.png(width: 16, height: 16)
        server.route("/cut.png", ScriptedResponse(body: body, behavior: .truncated(sentBytes: 50)), .ok(body))
        let fetcher = try fetcher()
        let result = try await fetcher.fetch(url: server.url("/cut.png"))

        #expect(result.status == .downloaded)
        #expect(server.requests(for: "/cut.png") == 2)
    }

    // MARK: - Retry-After

    @Test("429 with Retry-After: 1 waits about a second before the next request")
    func retryAfterIsHonoured() async throws {
        let server = try await LoopbackServer()
        server.route("/busy.png", .status(429, headers: [("Retry-After", "1")]), .ok(SampleImages.png()))
        let fetcher = try fetcher()
        let result = try await fetcher.fetch(url: server.url("/busy.png"))

        #expect(result.status == .downloaded)
        let requests = server.recordedRequests(for: "/busy.png")
        #expect(requests.count == 2)
        if requests.count == 2 {
            #expect(requests[1].receivedAt - requests[0].receivedAt >= .milliseconds(950))
        }
    }

    @Test("a Retry-After above the cap waits only the cap")
    func retryAfterIsCapped() async throws {
        let server = try await LoopbackServer()
        server.route("/busy.png", .status(503, headers: [("Retry-After", "3600")]), .ok(SampleImages.png()))
        let fetcher = try fetcher {
            $0.retryPolicy = RetryPolicy(
                baseDelay: .milliseconds(5), maxDelay: .milliseconds(20), retryAfterCap: .milliseconds(300))
        }
        let result = try await fetcher.fetch(url: server.url("/busy.png"))

        #expect(result.status == .downloaded)
        let requests = server.recordedRequests(for: "/busy.png")
        #expect(requests.count == 2)
        if requests.count == 2 {
            let gap = requests[1].receivedAt - requests[0].receivedAt
            #expect(gap >= .milliseconds(250) && gap < .seconds(10))
        }
    }

    @Test("cancelAll ends a Retry-After wait at once")
    func cancelAllWakesBackoff() async throws {
        let server = try await LoopbackServer()
        server.route("/busy.png", .status(503, headers: [("Retry-After", "20")]), .ok(SampleImages.png()))
        let fetcher = try fetcher()
        let key = try URLKey(parsing: server.url("/busy.png"))
        let task = Task { await fetcher.fetch(key, spelling: key.string) }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        // The ordering that matters: the fetch is asleep in its Retry-After wait before the latch trips.
        while fetcher.engine.interruption.sleepers < 1, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        try #require(fetcher.engine.interruption.sleepers == 1)
        let start = clock.now
        fetcher.cancelAll()
        let result = await task.value
        let elapsed = clock.now - start

        #expect(result.failure?.kind == .interrupted)
        #expect(elapsed < .seconds(2))
        #expect(server.requests(for: "/busy.png") == 1)
    }

    // MARK: - Policy arithmetic

    @Test("backoff starts at 0.5 s, doubles with at most 20% jitter, and stops at 8 s")
    func backoffSchedule() {
        let policy = RetryPolicy()
        func delay(_ retry: Int, retryAfter: Double? = nil, jitter: Double = 0.5) -> Double {
            let duration = policy.delay(beforeRetry: retry, retryAfter: retryAfter, jitter: jitter)
            return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let expectations: [(Double, Double)] = [
            (delay(1), 0.5), (delay(2), 1), (delay(3), 2), (delay(1, jitter: 0), 0.4), (delay(1, jitter: 1), 0.6),
            (delay(5, jitter: 1), 8), (delay(40), 8), (delay(1, retryAfter: 5), 5), (delay(1, retryAfter: 90), 30),
            (delay(3, retryAfter: 0), 2),
        ]
        for (actual, expected) in expectations { #expect(abs(actual - expected) < 1e-6) }
    }

    @Test("the blacklist and retry classification follow the spec")
    func classificationFollowsSpec() {
        let permanent: [FetchFailure.Kind] = [
            .http(400), .http(403), .http(404), .http(410), .http(451), .notAnImage, .corruptImage, .tooLarge,
            .tooManyPixels, .tooManyRedirects, .badRedirect,
        ]
        let transient: [FetchFailure.Kind] = [
            .timeout, .connect, .dns, .tls, .http(500), .http(503), .http(408), .http(425), .http(429), .truncated,
            .hostDown, .interrupted,
        ]
        #expect(permanent.allSatisfy { $0.isPermanent && !$0.isRetryable })
        #expect(transient.allSatisfy { !$0.isPermanent })
        let retried: [FetchFailure.Kind] = [
            .timeout, .connect, .dns, .tls, .http(502), .http(408), .http(429), .truncated,
        ]
        #expect(retried.allSatisfy { $0.isRetryable })
        #expect(![FetchFailure.Kind.hostDown, .interrupted, .offlineMiss, .io].contains { $0.isRetryable })
    }
}
