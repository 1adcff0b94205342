import Synchronization

/// Connection failures per host, so a dead host fails its remaining URLs at once as
/// `host-down` instead of each waiting for its own timeout (`--host-failures`).
///
/// A failure counts when no connection was ever made for the request (refused, DNS, TLS,
/// connect timeout); any request that reached the server resets its host's count. Two
/// failures end a host at once, whatever the count, when no request to it has reached it
/// in this run: a connect timeout (the host swallows connections: every retry would cost
/// another full timeout, and the first wave of requests to it fails together anyway) and a
/// name the resolver says does not exist (``NameCheck``, asked by the fetcher after curl's
/// DNS failure; a resolver that did not answer counts as one failure). Once a host is down it stays down for the rest of the run:
/// nothing more is sent to it, so nothing could show it came back. Only hosts with
/// failures, and the names of hosts reached, are kept, so memory follows the hosts of the
/// run, not the length of the list.
///
/// The ``CurlEngine`` loop records every outcome and consults it just before starting a
/// transfer (so requests queued behind the failures do not dial); the fetcher's retry
/// loop consults it before sleeping. Thread-safe through its `Mutex`.
final class HostHealth: Sendable {
    private struct State {
        var consecutiveFailures: [String: Int] = [:]
        /// Why each host that is down went down, for its `host-down` failures.
        var causes: [String: (kind: FetchFailure.Kind, text: String)] = [:]
        /// Hosts some request reached in this run.
        var reached: Set<String> = []
        /// Hosts whose name the resolver was asked about again after a DNS failure.
        var nameChecked: Set<String> = []
        /// Per host, its transfers that took ``HostHealth/slowTransfer`` or longer.
        var slow: [String: (transfers: Int, nanoseconds: UInt64)] = [:]
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
    ///   - failure: how the request failed, nil for a success or an interruption.
    ///   - limit: `--host-failures`; 0 records nothing.
    func record(_ host: String, reachedServer: Bool, failure: FetchFailure?, limit: Int) {
        guard limit > 0 else { return }
        state.withLock { state in
            if reachedServer {
                state.reached.insert(host)
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
            let endsAtOnce = !state.reached.contains(host) && failure.kind == .timeout
            let count = endsAtOnce ? limit : before + 1
            state.consecutiveFailures[host] = count
            if count >= limit {
                state.causes[host] = (
                    failure.kind,
                    endsAtOnce
                        ? Self.firstFailureCause(failure)
                        : "\(count) connection\(count == 1 ? "" : "s") failed in a row, the last with \(failure.kind.label): \(failure.detail)"
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
            guard state.consecutiveFailures[host, default: 0] < limit else { return }
            state.consecutiveFailures[host] = limit
            state.causes[host] = (.dns, "its name does not resolve (\(failure.detail))")
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

    /// Why a host that never answered was given up after one connect timeout.
    private static func firstFailureCause(_ failure: FetchFailure) -> String {
        "no connection within the timeout (\(failure.detail))"
    }

    /// The failure given to a request whose host is down.
    func failure(for host: String) -> FetchFailure {
        let cause = state.withLock { $0.causes[host]?.text } ?? "too many connections failed in a row"
        return FetchFailure(.hostDown, "\(host) is down: \(cause)")
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
