import Dispatch
import Testing

@testable import SDFetchCore

/// How a DNS failure is judged: a host is given up at its first one only when the resolver,
/// asked again, says the name does not exist; a resolver that did not answer is one failure.
@Suite("Name check")
struct NameCheckTests {
    private static let dns = FetchFailure(.dns, "could not resolve host: gone.test")

    @Test("a DNS failure alone does not give up a host no request has reached")
    func dnsFailureIsOneFailure() {
        let health = HostHealth()
        health.record("gone.test", url: "http://gone.test/a.png", reachedServer: false, failure: Self.dns, limit: 5)
        #expect(!health.isDown("gone.test", limit: 5))
        for _ in 2...5 {
            health.record("gone.test", url: "http://gone.test/a.png", reachedServer: false, failure: Self.dns, limit: 5)
        }
        #expect(health.isDown("gone.test", limit: 5))
        #expect(health.downHosts.first?.cause.hasPrefix("5 connections failed in a row") == true)
    }

    @Test("a connect timeout still gives up a host no request has reached at once")
    func connectTimeoutEndsAtOnce() {
        let health = HostHealth()
        health.record(
            "dead.test", url: "http://dead.test/a.png", reachedServer: false,
            failure: FetchFailure(.timeout, "connect"),
            limit: 5)
        #expect(health.isDown("dead.test", limit: 5))
    }

    @Test("a name the resolver says does not exist gives its host up, with that cause")
    func missingNameEndsHost() {
        let health = HostHealth()
        health.record("gone.test", url: "http://gone.test/a.png", reachedServer: false, failure: Self.dns, limit: 5)
        #expect(health.claimNameCheck("gone.test", limit: 5))
        #expect(!health.claimNameCheck("gone.test", limit: 5), "one check per host")
        health.recordMissingName("gone.test", failure: Self.dns, limit: 5)
        #expect(health.isDown("gone.test", limit: 5))
        let down = health.downHosts
        #expect(down.map(\.host) == ["gone.test"])
        #expect(down.first?.kind == .dns)
        #expect(down.first?.cause == "its name does not resolve (could not resolve host: gone.test)")
    }

    @Test("no check for a host a request reached, or with --host-failures 0")
    func noCheckForReachedHost() {
        let health = HostHealth()
        health.record("up.test", url: "http://up.test/a.png", reachedServer: true, failure: nil, limit: 5)
        #expect(!health.claimNameCheck("up.test", limit: 5))
        #expect(!health.claimNameCheck("other.test", limit: 0))
    }

    @Test("the name of a host and port; none for address literals")
    func hostNames() {
        #expect(NameCheck.hostName("images.test") == "images.test")
        #expect(NameCheck.hostName("images.test:8080") == "images.test")
        #expect(NameCheck.hostName("[::1]:8080") == nil)
        #expect(NameCheck.hostName("127.0.0.1:80") == nil)
        #expect(NameCheck.hostName("") == nil)
    }

    @Test("Ctrl-C does not wait for a resolver that does not answer")
    func interruptionEndsTheWait() async {
        let interruption = Interruption()
        let stuck = DispatchSemaphore(value: 0)  // a lookup that blocks until the test releases it
        // Should the wait not end on the trip (the regression this test is for), the lookup
        // answers after 60 s: the test fails on its clock instead of hanging. The bound is
        // loose: beside the whole suite on two cores a wake-up can wait seconds for a thread.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { stuck.signal() }
        let waiting = Task {
            await interruption.unlessTripped {
                await NameCheck.verdict(hostAndPort: "silent.test") { _ in
                    stuck.wait()
                    return .doesNotExist
                }
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        interruption.trip()
        let verdict = await waiting.value
        #expect(verdict == nil)
        #expect(ContinuousClock.now - started < .seconds(30))
        stuck.signal()
    }

    @Test("a name the resolver knows may exist")
    func localhostMayExist() async {
        #expect(await NameCheck.verdict(hostAndPort: "localhost:8080") == .mayExist)
        #expect(NameCheck.lookUp("localhost") == .mayExist)
    }
}
