import Synchronization

/// Consecutive connection failures per host, so a dead host fails its remaining URLs at
/// once as `host-down` instead of each waiting for its own timeout (`--host-failures`).
///
/// A failure counts when no connection was ever made for the request (refused, DNS, TLS,
/// connect timeout); any request that reached the server resets its host's count. Once a
/// host reaches the limit it stays down for the rest of the run: nothing more is sent to
/// it, so nothing could show it came back. Only hosts with failures are kept, so memory
/// follows the number of failing hosts, not the length of the list.
///
/// The ``CurlEngine`` loop records every outcome and consults it just before starting a
/// transfer (so requests queued behind the failures do not dial); the fetcher's retry
/// loop consults it before sleeping. Thread-safe through its `Mutex`.
final class HostHealth: Sendable {
    private let consecutiveFailures = Mutex<[String: Int]>([:])

    init() {}

    /// Whether `host` has failed `limit` times in a row; `limit` 0 turns the check off.
    func isDown(_ host: String, limit: Int) -> Bool {
        guard limit > 0 else { return false }
        return consecutiveFailures.withLock { $0[host, default: 0] >= limit }
    }

    /// Records one finished request to `host`.
    ///
    /// - Parameters:
    ///   - reachedServer: a connection was made or reused (curl's pre-request callback ran).
    ///   - failed: the request ended in a failure other than an interruption.
    ///   - limit: `--host-failures`; 0 records nothing.
    func record(_ host: String, reachedServer: Bool, failed: Bool, limit: Int) {
        guard limit > 0 else { return }
        consecutiveFailures.withLock { failures in
            if reachedServer {
                // A host marked down stays down: a late success of a request already in
                // flight does not reopen it for the rest of the batch.
                if let count = failures[host], count < limit { failures[host] = nil }
            } else if failed {
                failures[host, default: 0] += 1
            }
        }
    }

    /// The failure given to a request whose host is down.
    static func failure(for host: String) -> FetchFailure {
        FetchFailure(.hostDown, "\(host) failed too many connections in a row")
    }

    /// The host part (with any port) of an `http`/`https` URL, as the key of its health.
    ///
    /// URLs reaching the engine are ``URLKey`` strings, so the host is already lower-cased.
    static func host(of url: String) -> String {
        URLSpans(url).map { String($0.hostAndPort(in: url)) } ?? ""
    }
}
