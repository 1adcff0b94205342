import FoundationEssentials
import Synchronization

/// Connection failures per host, so a dead host fails its remaining URLs at once as
/// `host-down` instead of each waiting for its own timeout (`--host-failures`).
///
/// A failure counts when no connection was ever made for the request (refused, DNS, TLS,
/// connect timeout); any request that reached the server resets its host's count. A host
/// that has not answered yet in this run (no transfer to it came to an end, see
/// ``record(_:reachedServer:answered:failure:limit:)``) is given up at once, whatever the
/// count, on its first timeout, before or after connecting (it swallows connections, or
/// accepts and says nothing, or trickles: every retry would cost another full timeout, and
/// the first wave of requests to it fails together anyway), and on a name the resolver says
/// does not exist (``NameCheck``, asked by the fetcher after curl's DNS failure; a resolver
/// that did not answer counts as one failure). A host that answered once keeps its retries.
/// Once a host is down it stays down for the rest of the run: nothing more is sent to it,
/// so nothing could show it came back. Hosts the cache remembers as down
/// (``HostDownMemory``) start the run down. Only hosts with failures, and the names of hosts
/// reached, are kept, so memory follows the hosts of the run, not the length of the list.
///
/// The ``CurlEngine`` loop records every outcome and consults it just before starting a
/// transfer (so requests queued behind the failures do not dial); the fetcher's retry
/// loop consults it before sleeping. Thread-safe through its `Mutex`.
final class HostHealth: Sendable {
    private struct State {
        var consecutiveFailures: [String: Int] = [:]
        /// Why each host that is down went down, for its `host-down` failures.
        var causes: [String: (kind: FetchFailure.Kind, text: String)] = [:]
        /// Hosts down from the start of the run: the cache remembered them.
        var remembered: Set<String> = []
        /// Hosts some request reached in this run.
        var reached: Set<String> = []
        /// Hosts some transfer to which came to an end in this run: they answered.
        var answered: Set<String> = []
        /// Hosts whose name the resolver was asked about again after a DNS failure.
        var nameChecked: Set<String> = []
        /// Per host, its transfers that took ``HostHealth/slowTransfer`` or longer.
        var slow: [String: (transfers: Int, nanoseconds: UInt64)] = [:]

        /// Marks `host` down with `cause`, unless it is down already.
        mutating func giveUp(_ host: String, kind: FetchFailure.Kind, because cause: String, limit: Int) {
            guard consecutiveFailures[host, default: 0] < limit else { return }
            consecutiveFailures[host] = limit
            causes[host] = (kind, cause)
        }
    }

    /// A transfer this long from start to end makes its host a candidate for "slow" (at the
    /// 50-200 ms a far server takes per request, even a large image rarely needs it).
    static let slowTransfer: UInt64 = 1_000_000_000

    private let state = Mutex(State())

    init() {}

    /// Whether `host` is down under `limit` (`--host-failures`); 0 turns the check off.
    func isDown(_ host: String, limit: Int) -> Bool {
        guard limit > 0 else { return false }
        return state.withLock { $0.consecutiveFailures[host, default: 0] >= limit }
    }

    /// Records one finished request to `host`.
    ///
    /// - Parameters:
    ///   - reachedServer: a connection was made or reused (curl's pre-request callback ran).
    ///   - answered: the transfer came to an end with the server's answer (a complete
    ///     response, whatever its status, or a redirect followed), not cut by a timeout.
    ///   - failure: how the request failed, nil for a success or an interruption.
    ///   - limit: `--host-failures`; 0 records nothing.
    func record(_ host: String, reachedServer: Bool, answered: Bool = false, failure: FetchFailure?, limit: Int) {
        guard limit > 0 else { return }
        state.withLock { state in
            let hasAnswered = state.answered.contains(host)
            if answered { state.answered.insert(host) }
            if reachedServer { state.reached.insert(host) }
            // A first timeout of a host that never answered ends it, connected or not.
            if let failure, failure.kind == .timeout, !answered, !hasAnswered {
                state.giveUp(host, kind: .timeout, because: Self.silenceCause(failure, connected: reachedServer), limit: limit)
                return
            }
            if reachedServer || answered {
                // A host marked down stays down: a late success of a request already in
                // flight does not reopen it for the rest of the batch.
                if let count = state.consecutiveFailures[host], count < limit {
                    state.consecutiveFailures[host] = nil
                }
                return
            }
            guard let failure else { return }
            let before = state.consecutiveFailures[host, default: 0]
            guard before < limit else { return }
            let count = before + 1
            state.consecutiveFailures[host] = count
            if count >= limit {
                state.causes[host] = (
                    failure.kind,
                    "\(count) connection\(count == 1 ? "" : "s") failed in a row, the last with \(failure.kind.label): \(failure.detail)"
                )
            }
        }
    }

    /// Whether a DNS failure of `host` calls for a ``NameCheck``: true once per host, for a
    /// host that no request has reached and that is not down yet.
    func claimNameCheck(_ host: String, limit: Int) -> Bool {
        guard limit > 0 else { return false }
        return state.withLock { state in
            guard !state.reached.contains(host), state.consecutiveFailures[host, default: 0] < limit else { return false }
            return state.nameChecked.insert(host).inserted
        }
    }

    /// Gives `host` up: the resolver said its name does not exist after curl's `failure`.
    func recordMissingName(_ host: String, failure: FetchFailure, limit: Int) {
        guard limit > 0 else { return }
        state.withLock { state in
            state.giveUp(host, kind: .dns, because: "its name does not resolve (\(failure.detail))", limit: limit)
        }
    }

    /// Starts the run with `hosts` down, as the cache remembers them; a later failure in
    /// this run does not replace their cause.
    func rememberDown(_ hosts: [HostDownRecord], now: Date, limit: Int) {
        guard limit > 0, !hosts.isEmpty else { return }
        state.withLock { state in
            for record in hosts {
                let ago = max(0, Int((now.timeIntervalSince(record.recordedAt) / 60).rounded(.down)))
                let cause = "found down \(ago == 0 ? "less than a minute" : "\(ago) min") ago: \(record.cause)"
                state.giveUp(record.host, kind: record.kind, because: cause, limit: limit)
                state.remembered.insert(record.host)
            }
        }
    }

    /// Hosts that went down in this run for a reason worth remembering across runs (their
    /// name does not resolve, or they gave no answer within the timeout), not those the
    /// cache already remembered; the others failed fast and cost a re-run nothing.
    var newlyDownForMemory: [DownHost] {
        state.withLock { state in
            state.causes.filter { !state.remembered.contains($0.key) && HostDownRecord.isRemembered($0.value.kind) }
                .map { DownHost(host: $0.key, kind: $0.value.kind, cause: $0.value.text) }
                .sorted { $0.host < $1.host }
        }
    }

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

    /// The failure given to a request whose host is down, carrying the host's cause.
    func failure(for host: String) -> FetchFailure {
        let cause = state.withLock { $0.causes[host] }
        return FetchFailure(
            .hostDown, "\(host) is down: \(cause?.text ?? "too many connections failed in a row")",
            hostCause: cause?.kind ?? .connect)
    }

    /// How many hosts went down in this run.
    var downCount: Int { state.withLock { $0.causes.count } }

    /// Every host that went down in this run and why, sorted by name.
    var downHosts: [DownHost] {
        state.withLock { state in
            state.causes.map { DownHost(host: $0.key, kind: $0.value.kind, cause: $0.value.text) }
                .sorted { $0.host < $1.host }
        }
    }

    /// The host part (with any port) of an `http`/`https` URL, as the key of its health.
    ///
    /// URLs reaching the engine are ``URLKey`` strings, so the host is already lower-cased.
    static func host(of url: String) -> String {
        URLSpans(url).map { String($0.hostAndPort(in: url)) } ?? ""
    }
}
