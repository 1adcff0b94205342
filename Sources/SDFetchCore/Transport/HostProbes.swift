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
/// (``CurlEngine/expect(_:hostFailureLimit:distant:)``: a run's lines queued for a network
/// slot, and, further ahead, the hosts its input scout reads; hosts met near their turn are
/// probed first): the first time a host is met and no transfer to it has started, a probe
/// resolves its name and opens a TCP connection to its port (curl's `CURLOPT_CONNECT_ONLY`,
/// plain TCP even for `https`: no handshake to pay for), outside the slots of `-j`, at most
/// ``capacity`` at once. While a host's probe runs its requests
/// wait in the ``HostScheduler`` rather than holding a slot in a connect of their own. A
/// probe that times out gives its host up (``HostHealth``: no connection within the
/// timeout), and its URLs then fail `host-down` at once; any other outcome lets them go,
/// with the name already in the multi handle's DNS cache. The probe's connection is closed
/// at once: the cost for a live host is one TCP handshake, where its requests would have
/// waited for a slot anyway. No probe goes out through a proxy (the proxy would answer).
struct HostProbes {
    private enum Stage {
        case near, distant
        /// Probed, or a transfer to it started.
        case done
    }

    private struct Candidate {
        let host: String
        let timeoutMilliseconds: Int
        let hostFailureLimit: Int
    }

    /// Probes at once: four times `-j` where the open-file limit allows (a list's far hosts
    /// are many, a live one's probe lasts a round trip and a dead one's a whole timeout, so
    /// the last dead host is found as soon as every host has been dialled once), a quarter of
    /// `-j` at least (the room the CLI's `DescriptorLimit` leaves them); 0: none. Split
    /// between an engine's loop threads.
    let capacity: Int
    /// Where each host met stands; absent: never met.
    private var hosts: [String: Stage] = [:]
    /// Candidates met near their turn (the engine's queue, the run's line queue), first.
    private var near = FirstInFirstOut<Candidate>()
    /// Candidates met far ahead of their turn (the run's input scout), once `near` is empty.
    private var distant = FirstInFirstOut<Candidate>()
    /// Running probes: easy handle to its host and `--host-failures`.
    private var running: [UnsafeMutableRawPointer: (host: String, limit: Int, timeoutMilliseconds: Int)] = [:]

    init(capacity: Int) {
        self.capacity = capacity
    }

    var isEnabled: Bool { capacity > 0 }
    var isEmpty: Bool { running.isEmpty }

    /// A request to `host` joined the queue (`distant`: will, far ahead): a candidate when
    /// the host is new, moved up when a distant candidate's turn nears.
    mutating func met(_ host: String, request: TransferRequest, hostFailureLimit: Int, distant: Bool = false) {
        guard isEnabled, hostFailureLimit > 0, request.connection.proxy == nil, !host.isEmpty else { return }
        switch hosts[host] {
        case nil: break
        case .distant? where !distant: break
        default: return
        }
        hosts[host] = distant ? .distant : .near
        let timeout = request.timeout.nanosecondsClamped / 1_000_000
        let candidate = Candidate(
            host: host, timeoutMilliseconds: Int(min(max(1, timeout), UInt64(Int32.max))),
            hostFailureLimit: hostFailureLimit)
        if distant { self.distant.append(candidate) } else { near.append(candidate) }
    }

    /// A transfer to `host` started: a probe of it is no use any more.
    mutating func didStart(_ host: String) {
        guard isEnabled else { return }
        hosts[host] = .done
    }

    /// Starts probes of candidates not started yet, up to ``capacity``; returns the hosts
    /// now probed, for the scheduler to hold their requests.
    mutating func launch(on multi: UnsafeMutableRawPointer, skipping isDown: (String, Int) -> Bool) -> [String] {
        var launched: [String] = []
        while running.count < capacity, let candidate = near.popFirst() ?? distant.popFirst() {
            // A distant candidate moved up, or a host started meanwhile: probed once at most.
            guard hosts[candidate.host] != .done else { continue }
            hosts[candidate.host] = .done
            guard !isDown(candidate.host, candidate.hostFailureLimit), let handle = Self.handle(for: candidate)
            else { continue }
            running[handle] = (candidate.host, candidate.hostFailureLimit, candidate.timeoutMilliseconds)
            curl_multi_add_handle(multi, handle)
            launched.append(candidate.host)
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
        let authority = Origin(probe.host)?.authority ?? probe.host
        let failure =
            code == CURLE_OPERATION_TIMEDOUT
            ? FetchFailure(.timeout, "no TCP connection to \(authority) in \(probe.timeoutMilliseconds) ms")
            : nil
        return (probe.host, probe.limit, failure)
    }

    /// Ends every probe (Ctrl-C, shutdown); returns their hosts.
    mutating func cancelAll(on multi: UnsafeMutableRawPointer) -> [String] {
        let probed = running.values.map(\.host)
        for handle in running.keys {
            curl_multi_remove_handle(multi, handle)
            curl_easy_cleanup(handle)
        }
        running.removeAll()
        near = FirstInFirstOut()
        distant = FirstInFirstOut()
        return probed
    }

    /// ``capacity`` for a run of `maxTransfers` (`-j`).
    static func capacity(maxTransfers: Int) -> Int {
        // Below -j 4 none: a run that small has no slots to spare for a look-ahead.
        guard maxTransfers >= 4, !proxyInEnvironment else { return 0 }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return maxTransfers / 4 }
        let openFiles = Int(min(limit.rlim_cur, rlim_t(Int32.max)))
        let room = (openFiles - CurlEngine.descriptorsReserved) / CurlEngine.descriptorsPerTransfer - maxTransfers
        return min(maxTransfers * 4, max(maxTransfers / 4, room))
    }

    /// A connect-only handle to the origin's port: the name resolved through the multi
    /// handle's shared DNS cache, a TCP connection, nothing sent.
    private static func handle(for candidate: Candidate) -> UnsafeMutableRawPointer? {
        guard let authority = Origin(candidate.host)?.authority, let handle = curl_easy_init() else { return nil }
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = "http://\(authority)/".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_URL, $0) }
        _ = "http".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, $0) }
        _ = "".withCString { CSDFetch_curl_easy_setopt_string(handle, CURLOPT_PROXY, $0) }
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1)
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, candidate.timeoutMilliseconds)
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_DNS_CACHE_TIMEOUT, -1)
        // A probe receives nothing: libcurl's smallest download buffer, not its 16 KB,
        // which a thousand probes in flight held for nothing.
        _ = CSDFetch_curl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 1024)
        return handle
    }

    /// A proxy from the environment (libcurl's own reading, as `curl` does): probing the
    /// hosts directly would tell nothing about the way requests go, nor does a refusal.
    static var proxyInEnvironment: Bool {
        let names: [String] = ["http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY"]
        return names.contains { (name: String) -> Bool in
            guard let value = getenv(name) else { return false }
            return value.pointee != 0
        }
    }
}
