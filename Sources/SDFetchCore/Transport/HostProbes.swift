internal import CCurl
internal import CSDFetchShims
import Glibc

/// Connections to new hosts opened ahead of their turn, so a dead host's connect timeout
/// overlaps the rest of the run instead of costing a whole timeout when its first URL's
/// turn comes late (<doc:Fetching#Retries-and-timeouts>).
///
/// Loop-thread state of the ``TransferLoop`` (never `Sendable`). The look-ahead is the
/// engine's queue of requests waiting for a slot of `-j` (bounded by what the fetcher keeps
/// in flight, a few times `-j`) and the requests announced ahead of it
/// (``CurlEngine/expect(_:hostFailureLimit:)``: a run's lines queued for a network slot):
/// the first time a host is met there and no transfer to it has started, a probe resolves
/// its name and opens a TCP connection to its port (curl's `CURLOPT_CONNECT_ONLY`, plain
/// TCP even for `https`: no handshake to pay for), outside
/// the slots of `-j`, at most ``capacity`` at once. While a host's probe runs its requests
/// wait in the ``HostScheduler`` rather than holding a slot in a connect of their own. A
/// probe that times out gives its host up (``HostHealth``: no connection within the
/// timeout), and its URLs then fail `host-down` at once; any other outcome lets them go,
/// with the name already in the multi handle's DNS cache. The probe's connection is closed
/// at once: the cost for a live host is one TCP handshake, where its requests would have
/// waited for a slot anyway. No probe goes out through a proxy (the proxy would answer).
struct HostProbes {
    private struct Candidate {
        let host: String
        let timeoutMilliseconds: Int
        let hostFailureLimit: Int
        let isTLS: Bool
    }

    /// Probes at once: a quarter of `-j` (`DescriptorLimit` leaves them room); 0: none.
    let capacity: Int
    /// Hosts met in the queue or started: each is a candidate once.
    private var seen: Set<String> = []
    /// Hosts a transfer was started for: they need no probe.
    private var started: Set<String> = []
    private var candidates: [Candidate] = []
    private var nextCandidate = 0
    /// Running probes: easy handle to its host and `--host-failures`.
    private var running: [UnsafeMutableRawPointer: (host: String, limit: Int, timeoutMilliseconds: Int)] = [:]

    init(maxTransfers: Int) {
        capacity = Self.proxyInEnvironment ? 0 : maxTransfers / 4
    }

    var isEnabled: Bool { capacity > 0 }
    var isEmpty: Bool { running.isEmpty }

    /// A request to `host` joined the queue: a candidate when the host is new.
    mutating func met(_ host: String, request: TransferRequest, hostFailureLimit: Int) {
        guard isEnabled, hostFailureLimit > 0, request.connection.proxy == nil, !host.isEmpty,
            seen.insert(host).inserted
        else { return }
        let timeout = request.timeout.nanosecondsClamped / 1_000_000
        candidates.append(
            Candidate(
                host: host, timeoutMilliseconds: Int(min(max(1, timeout), UInt64(Int32.max))),
                hostFailureLimit: hostFailureLimit, isTLS: request.url.hasPrefix("https:")))
    }

    /// A transfer to `host` started: a probe of it is no use any more.
    mutating func didStart(_ host: String) {
        guard isEnabled else { return }
        started.insert(host)
        seen.insert(host)
    }

    /// Starts probes of candidates not started yet, up to ``capacity``; returns the hosts
    /// now probed, for the scheduler to hold their requests.
    mutating func launch(on multi: UnsafeMutableRawPointer, skipping isDown: (String, Int) -> Bool) -> [String] {
        var launched: [String] = []
        while running.count < capacity, nextCandidate < candidates.count {
            let candidate = candidates[nextCandidate]
            nextCandidate += 1
            guard !started.contains(candidate.host), !isDown(candidate.host, candidate.hostFailureLimit),
                let handle = Self.handle(for: candidate)
            else { continue }
            running[handle] = (candidate.host, candidate.hostFailureLimit, candidate.timeoutMilliseconds)
            curl_multi_add_handle(multi, handle)
            launched.append(candidate.host)
        }
        if nextCandidate == candidates.count, nextCandidate > 0 {
            candidates.removeAll(keepingCapacity: true)
            nextCandidate = 0
        }
        return launched
    }

    /// The probe `handle` ended with `code`: removed and freed; nil when `handle` is no probe.
    mutating func finish(
        _ handle: UnsafeMutableRawPointer, code: CURLcode, on multi: UnsafeMutableRawPointer
    ) -> (host: String, limit: Int, timedOut: FetchFailure?)? {
        guard let probe = running.removeValue(forKey: handle) else { return nil }
        curl_multi_remove_handle(multi, handle)
        curl_easy_cleanup(handle)
        let failure = code == CURLE_OPERATION_TIMEDOUT
            ? FetchFailure(.timeout, "no TCP connection to \(probe.host) in \(probe.timeoutMilliseconds) ms")
            : nil
        return (probe.host, probe.limit, failure)
    }

    /// Ends every probe (Ctrl-C, shutdown); returns their hosts.
    mutating func cancelAll(on multi: UnsafeMutableRawPointer) -> [String] {
        let hosts = running.values.map(\.host)
        for handle in running.keys {
            curl_multi_remove_handle(multi, handle)
            curl_easy_cleanup(handle)
        }
        running.removeAll()
        candidates.removeAll()
        nextCandidate = 0
        return hosts
    }

    /// A connect-only handle to the host's port: the name resolved through the multi
    /// handle's shared DNS cache, a TCP connection, nothing sent.
    private static func handle(for candidate: Candidate) -> UnsafeMutableRawPointer? {
        guard let handle = curl_easy_init() else { return nil }
        let hasPort = candidate.host.last.map(\.isNumber) == true && !candidate.host.hasSuffix("]")
            && candidate.host.contains(":" as Character)
        let authority = hasPort ? candidate.host : "\(candidate.host):\(candidate.isTLS ? 443 : 80)"
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = "http://\(authority)/".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_URL, $0) }
        _ = "http".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, $0) }
        _ = "".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_PROXY, $0) }
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1)
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, candidate.timeoutMilliseconds)
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_DNS_CACHE_TIMEOUT, -1)
        return handle
    }

    /// A proxy from the environment (libcurl's own reading, as `curl` does): probing the
    /// hosts directly would tell nothing about the way requests go.
    private static var proxyInEnvironment: Bool {
        let names: [String] = ["http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY"]
        return names.contains { (name: String) -> Bool in
            guard let value = getenv(name) else { return false }
            return value.pointee != 0
        }
    }
}
