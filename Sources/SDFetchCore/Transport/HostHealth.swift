import FoundationEssentials
import Synchronization

/// Connection failures per origin (scheme, host and effective port: a dead port 80 says
/// nothing of the same name's HTTPS), so a dead host fails its remaining URLs at once as
/// `host-down` instead of each waiting for its own timeout (`--host-failures`).
///
/// A failure counts when no connection was ever made for the request (refused, DNS, TLS,
/// connect timeout); any request that reached the server resets its origin's count. An origin
/// that has not answered yet in this run (no transfer to it came to an end, see
/// ``record(_:url:reachedServer:answered:failure:refusal:limit:)``) is given up at once, whatever the
/// count, on its first timeout, before or after connecting (it swallows connections, or
/// accepts and says nothing, or trickles: every retry would cost another full timeout, and
/// the first wave of requests to it fails together anyway), and on a name the resolver says
/// does not exist (``NameCheck``, asked by the fetcher after curl's DNS failure; a resolver
/// that did not answer counts as one failure). An origin that answered once keeps its
/// retries. Once down it stays down for the rest of the run: nothing more is sent to it, so
/// nothing could show it came back. Origins the cache remembers as down (``HostDownMemory``)
/// start the run down. Only origins with failures, and the names of origins reached, are
/// kept, so memory follows the hosts of the run, not the length of the list.
///
/// Only evidence about the host itself is remembered across runs (``newlyDownForMemory``):
/// its name does not resolve, no connection was made within the timeout, two different
/// URLs met silence after connecting, or it turned away two connections or more and
/// answered nothing: refused two (nothing listens), or reset, closed or broke off the
/// handshake of two different URLs' connections. One URL's silence may be that URL's
/// slowness (a thumbnail rendered on demand under `-t 1`), and one URL's resets a firewall's
/// rule about that URL (its retries meet it again): either gives the origin up for this run
/// only. A host that turns connections away is not given up for it in the run (each
/// refusal is quick, and `--host-failures` counts them), but a re-run would retry each of
/// its URLs after the backoff's waits, and a re-run over a warm cache has nothing else to
/// do meanwhile (`Scripts/bench.d/README.md`, "A warm re-run, and CPU per URL").
///
/// The ``CurlEngine`` loop records every outcome and consults it just before starting a
/// transfer (so requests queued behind the failures do not dial); the fetcher's retry
/// loop consults it before sleeping. Thread-safe through its `Mutex`.
final class HostHealth: Sendable {
    /// Why an origin went down.
    private struct Cause {
        let kind: FetchFailure.Kind
        /// As found in this run, or as the cache remembered it (one copy of the record's text).
        let text: String
        /// Minutes since an earlier run found it down; nil: found down in this run.
        let foundMinutesAgo: Int?
        /// Evidence about the host itself, worth remembering across runs.
        var isEvidence: Bool
    }

    private struct State {
        var consecutiveFailures: [String: Int] = [:]
        /// Why each origin that is down went down, for its `host-down` failures.
        var causes: [String: Cause] = [:]
        /// Origins some request reached in this run.
        var reached: Set<String> = []
        /// Origins some transfer to which came to an end in this run: they answered.
        var answered: Set<String> = []
        /// Per origin that never answered, the first URL that met silence after connecting.
        var silentURLs: [String: String] = [:]
        /// Origins whose name the resolver was asked about again after a DNS failure.
        var nameChecked: Set<String> = []
        /// Per origin, its transfers that took ``HostHealth/slowTransfer`` or longer.
        var slow: [String: (transfers: Int, nanoseconds: UInt64)] = [:]
        /// Per origin, the connections it turned away (``Refusals``).
        var refusals: [String: Refusals] = [:]

        /// Marks `origin` down with `cause`, unless it is down already; then only evidence
        /// found later is added to its cause.
        mutating func giveUp(_ origin: String, _ cause: Cause, limit: Int) {
            guard consecutiveFailures[origin, default: 0] < limit else {
                if cause.isEvidence { causes[origin]?.isEvidence = true }
                return
            }
            consecutiveFailures[origin] = limit
            causes[origin] = cause
        }
    }

    /// A transfer this long from start to end makes its host a candidate for "slow" (at the
    /// 50-200 ms a far server takes per request, even a large image rarely needs it).
    static let slowTransfer: UInt64 = 1_000_000_000

    /// Connections an origin turned away in the run: refused ones counted each, the others
    /// by URL, at most ``HostHealth/refusalsRemembered`` digests kept.
    private struct Refusals {
        /// Every connection turned away, for the cause's text.
        var connections = 0
        var refused = 0
        var turnedAwayURLs: [KeyDigest] = []
        var last: FetchFailure

        /// Enough to remember the origin: two refused, or two URLs' connections turned away.
        var isEvidence: Bool {
            max(refused, turnedAwayURLs.count) >= HostHealth.refusalsRemembered
        }

        mutating func add(_ refusal: HostRefusal, url: String, _ failure: FetchFailure) {
            connections += 1
            last = failure
            switch refusal {
            case .refused: refused += 1
            case .turnedAway:
                guard turnedAwayURLs.count < HostHealth.refusalsRemembered else { return }
                let digest = KeyDigest(of: url)
                if !turnedAwayURLs.contains(digest) { turnedAwayURLs.append(digest) }
            }
        }
    }

    private let state = Mutex(State())

    init() {}

    /// Whether `host` is down under `limit` (`--host-failures`); 0 turns the check off.
    func isDown(_ host: String, limit: Int) -> Bool {
        guard limit > 0 else { return false }
        return state.withLock { $0.consecutiveFailures[host, default: 0] >= limit }
    }

    /// Records one finished request to `origin`.
    ///
    /// - Parameters:
    ///   - url: the request's URL, to tell two silent URLs from one silent twice.
    ///   - reachedServer: a connection was made or reused (curl's pre-request callback ran).
    ///   - answered: the transfer came to an end with the server's answer (a complete
    ///     response, whatever its status, or a redirect followed), not cut by a timeout.
    ///   - failure: how the request failed, nil for a success or an interruption.
    ///   - refusal: how the host turned the connection away (``TransferResponse/refusal``).
    ///   - limit: `--host-failures`; 0 records nothing.
    func record(
        _ origin: String, url: String, reachedServer: Bool, answered: Bool = false, failure: FetchFailure?,
        refusal: HostRefusal? = nil, limit: Int
    ) {
        guard limit > 0 else { return }
        state.withLock { state in
            let hasAnswered = state.answered.contains(origin)
            if answered { state.answered.insert(origin) }
            if reachedServer { state.reached.insert(origin) }
            if let refusal, !answered, let failure {
                state.refusals[origin, default: Refusals(last: failure)].add(refusal, url: url, failure)
            }
            // A first timeout of an origin that never answered ends it, connected or not.
            if let failure, failure.kind == .timeout, !answered, !hasAnswered {
                // No connection is evidence about the host; silence after connecting is only
                // when a second URL meets it too.
                let firstSilent = reachedServer ? state.silentURLs[origin] : nil
                if reachedServer, firstSilent == nil { state.silentURLs[origin] = url }
                let isEvidence = !reachedServer || (firstSilent.map { $0 != url } ?? false)
                let text = Self.silenceCause(failure, connected: reachedServer)
                let cause = Cause(kind: .timeout, text: text, foundMinutesAgo: nil, isEvidence: isEvidence)
                state.giveUp(origin, cause, limit: limit)
                return
            }
            if reachedServer || answered {
                // An origin marked down stays down: a late success of a request already in
                // flight does not reopen it for the rest of the batch.
                if let count = state.consecutiveFailures[origin], count < limit {
                    state.consecutiveFailures[origin] = nil
                }
                return
            }
            guard let failure else { return }
            let before = state.consecutiveFailures[origin, default: 0]
            guard before < limit else { return }
            let count = before + 1
            state.consecutiveFailures[origin] = count
            if count >= limit {
                let text =
                    "\(count) connection\(count == 1 ? "" : "s") failed in a row, "
                    + "the last with \(failure.kind.label): \(failure.detail)"
                state.causes[origin] = Cause(kind: failure.kind, text: text, foundMinutesAgo: nil, isEvidence: true)
            }
        }
    }

    /// Whether a DNS failure of `host` calls for a ``NameCheck``: true once per host, for a
    /// host that no request has reached and that is not down yet.
    func claimNameCheck(_ host: String, limit: Int) -> Bool {
        guard limit > 0 else { return false }
        return state.withLock { state in
            guard !state.reached.contains(host), state.consecutiveFailures[host, default: 0] < limit else {
                return false
            }
            return state.nameChecked.insert(host).inserted
        }
    }

    /// Gives `host` up: the resolver said its name does not exist after curl's `failure`.
    func recordMissingName(_ host: String, failure: FetchFailure, limit: Int) {
        guard limit > 0 else { return }
        state.withLock { state in
            let text = "its name does not resolve (\(failure.detail))"
            state.giveUp(host, Cause(kind: .dns, text: text, foundMinutesAgo: nil, isEvidence: true), limit: limit)
        }
    }

    /// Starts the run with `hosts` down, as the cache remembers them; a later failure in
    /// this run does not replace their cause.
    func rememberDown(_ hosts: [HostDownRecord], now: Date, limit: Int) {
        guard limit > 0, !hosts.isEmpty else { return }
        state.withLock { state in
            for record in hosts {
                let ago = max(0, Int((now.timeIntervalSince(record.recordedAt) / 60).rounded(.down)))
                let cause = Cause(kind: record.kind, text: record.cause, foundMinutesAgo: ago, isEvidence: false)
                state.giveUp(record.host, cause, limit: limit)
            }
        }
    }

    /// Origins that went down in this run on evidence about the host itself (its name does
    /// not resolve, no connection within the timeout, two URLs met silence) and answered
    /// nothing in it, not those the cache already remembered: what a re-run is spared.
    var newlyDownForMemory: [DownHost] {
        state.withLock { state in
            var down: [String: (kind: FetchFailure.Kind, text: String)] = [:]
            for (origin, cause) in state.causes where cause.isEvidence && cause.foundMinutesAgo == nil {
                guard [.dns, .timeout].contains(cause.kind), !state.answered.contains(origin) else { continue }
                down[origin] = (cause.kind, cause.text)
            }
            for (origin, refusals) in state.refusals where refusals.isEvidence {
                // Remembered from an earlier run: its record stays as it was.
                guard down[origin] == nil, state.causes[origin]?.foundMinutesAgo == nil,
                    !state.answered.contains(origin)
                else { continue }
                let text =
                    "turned away \(refusals.connections) connections and answered nothing, "
                    + "the last with \(refusals.last.kind.label): \(refusals.last.detail)"
                down[origin] = (.connect, text)
            }
            return down.map { DownHost(host: $0.key, kind: $0.value.kind, cause: $0.value.text) }
                .sorted { $0.host < $1.host }
        }
    }

    /// Connections a host that answered nothing must have turned away to be remembered as
    /// down: two refused, or those of two different URLs reset or broken off, as two URLs
    /// must meet silence; one URL's three tries (`--retries 2`) are one URL.
    static let refusalsRemembered = 2

    /// Origins that answered in this run.
    var answeredOrigins: [String] { state.withLock { Array($0.answered) } }

    /// Records a transfer to `host` that reached it and took `nanoseconds` in all; only slow
    /// ones are kept, so memory follows the slow hosts.
    func recordDuration(_ host: String, nanoseconds: UInt64) {
        guard nanoseconds >= Self.slowTransfer else { return }
        state.withLock { state in
            let current = state.slow[host] ?? (0, 0)
            state.slow[host] = (current.transfers + 1, current.nanoseconds &+ nanoseconds)
        }
    }

    /// Hosts with at least `minimum` slow transfers, the most time first.
    func slowHosts(minimum: Int) -> [SlowHost] {
        state.withLock { state in
            state.slow.filter { $0.value.transfers >= minimum }
                .sorted { $0.value.nanoseconds > $1.value.nanoseconds }
                .map { SlowHost(host: $0.key, transfers: $0.value.transfers, nanoseconds: $0.value.nanoseconds) }
        }
    }

    /// Why a host that never answered was given up after one timeout.
    private static func silenceCause(_ failure: FetchFailure, connected: Bool) -> String {
        connected
            ? "no answer within the timeout after connecting (\(failure.detail))"
            : "no connection within the timeout (\(failure.detail))"
    }

    /// The failure given to a request whose origin is down, carrying the origin's cause.
    func failure(for origin: String) -> FetchFailure {
        let cause = state.withLock { $0.causes[origin] }
        return FetchFailure(
            .hostDown, "\(origin) is down: \(cause.map(Self.describe) ?? "too many connections failed in a row")",
            hostCause: cause?.kind ?? .connect, isHostRemembered: cause?.foundMinutesAgo != nil)
    }

    /// A cause as its `host-down` failures tell it.
    private static func describe(_ cause: Cause) -> String {
        guard let ago = cause.foundMinutesAgo else { return cause.text }
        return "found down \(ago == 0 ? "less than a minute" : "\(ago) min") ago: \(cause.text)"
    }

    /// How many hosts went down in this run.
    var downCount: Int { state.withLock { $0.causes.count } }

    /// Every host that went down in this run and why, sorted by name.
    var downHosts: [DownHost] {
        state.withLock { state in
            state.causes.map { DownHost(host: $0.key, kind: $0.value.kind, cause: Self.describe($0.value)) }
                .sorted { $0.host < $1.host }
        }
    }
}
