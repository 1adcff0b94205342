import Testing

@testable import SDFetchCore

/// The per-host rules of the engine's loop, on its own state: what `--per-host` allows once
/// a host multiplexes, and what a `Retry-After` pause holds.
@Suite("Host scheduler")
struct HostSchedulerTests {
    @Test("a host no connection reached yet gets one probe, then its --per-host lanes")
    func unreachedHostGetsOneProbe() {
        var scheduler = HostScheduler(pacing: TransferPacing(perHost: 3))
        #expect(scheduler.mayStart("new.test", now: 0))
        scheduler.started("new.test")
        #expect(!scheduler.mayStart("new.test", now: 0))
        scheduler.sent("new.test", at: 1, firstForTransfer: true)
        scheduler.started("new.test")
        scheduler.started("new.test")
        #expect(!scheduler.mayStart("new.test", now: 2))
        scheduler.finished("new.test", wasSent: true, now: 3)
        #expect(scheduler.mayStart("new.test", now: 3))
    }

    @Test("an HTTP/2 host may carry a connection's streams, an HTTP/1.1 host --per-host transfers")
    func multiplexedHostGetsStreams() {
        var scheduler = HostScheduler(pacing: TransferPacing(perHost: 2))
        for host in ["h2.test", "h1.test"] {
            scheduler.started(host)
            scheduler.sent(host, at: 0, firstForTransfer: true)
            scheduler.started(host)
        }
        #expect(!scheduler.mayStart("h2.test", now: 0))
        scheduler.multiplexes("h2.test")
        #expect(scheduler.mayStart("h2.test", now: 0))
        #expect(!scheduler.mayStart("h1.test", now: 0))
        for _ in 2..<HostScheduler.streamsPerConnection { scheduler.started("h2.test") }
        #expect(!scheduler.mayStart("h2.test", now: 0))
    }

    @Test("a Retry-After pause holds its host until it ends, and no other host")
    func pauseHoldsItsHostOnly() {
        var scheduler = HostScheduler(pacing: TransferPacing(perHost: 6))
        scheduler.started("busy.test")
        scheduler.pause("busy.test", until: 5_000)
        scheduler.finished("busy.test", wasSent: true, now: 1_000)
        #expect(!scheduler.mayStart("busy.test", now: 4_999))
        #expect(scheduler.mayStart("busy.test", now: 5_000))
        #expect(scheduler.mayStart("other.test", now: 1_000))
    }

    @Test("an idle host is forgotten once nothing learned about it matters")
    func idleHostIsForgotten() {
        var scheduler = HostScheduler(pacing: TransferPacing(perHost: 1))
        scheduler.started("a.test")
        #expect(!scheduler.mayStart("a.test", now: 0))
        scheduler.finished("a.test", wasSent: true, now: 0)
        #expect(scheduler.mayStart("a.test", now: 0))
        #expect(scheduler.nanosecondsUntilNextStart(now: 0) == nil)
    }
}
