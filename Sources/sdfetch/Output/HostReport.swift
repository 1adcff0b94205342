import SDFetchCore

/// Failures told per host: a dead host is one line, not one per URL; slow hosts are named at
/// the end; a run whose host names mostly do not resolve says so once.
///
/// Owned by the ``EventConsumer``; memory follows the hosts that went down.
struct HostReport {
    /// What to show on standard error for one failed result.
    enum Line: Equatable {
        /// The result's own failure line.
        case own
        /// The first `host-down` of its host: this line, for the host, instead.
        case host(String)
        /// A later `host-down` of a host already told.
        case folded
    }

    /// `host-down` URLs per host.
    private(set) var downCounts: [String: Int] = [:]
    /// `host-down` URLs per cause of their host (`dns`, `timeout`, `connect`...).
    private(set) var downCauses: [String: Int] = [:]
    /// The cause of each host down, as its first `host-down` URL carried it.
    private var hostCauses: [String: String] = [:]
    /// URLs whose own lookup failed (`dns`).
    private(set) var dnsFailures = 0
    /// URLs that reached a status, for the share that did not resolve.
    private(set) var urls = 0
    /// Learned from the fetcher at the end of the run.
    var downHosts: [DownHost] = []
    var slowHosts: [SlowHost] = []

    /// Hosts listed by name in the closing lines at most; the rest are counted.
    static let listed = 20
    /// Slow hosts named at the end at most, and the slow answers that make a host worth naming.
    static let slowListed = 5
    static let slowMinimum = 3

    mutating func note(_ result: FetchResult) -> Line {
        if result.status != .invalid { urls += 1 }
        guard let failure = result.failure else { return .own }
        if failure.kind == .dns { dnsFailures += 1 }
        guard failure.kind == .hostDown, let host = result.key?.origin else { return .own }
        downCounts[host, default: 0] += 1
        let cause = failure.hostCause?.label ?? hostCauses[host] ?? "connect"
        downCauses[cause, default: 0] += 1
        guard downCounts[host] == 1 else { return .folded }
        hostCauses[host] = cause
        return .host(
            "sdfetch: failed: \(Escaping.terminal(failure.detail)); its other URLs fail at once as host-down\n")
    }

    /// The closing lines: hosts down with their URL counts, unresolvable names when they are
    /// most of the run, slow hosts; empty when there is nothing to say.
    var closingText: String {
        var text = ""
        if !downCounts.isEmpty {
            let hosts = downCounts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            let total = downCounts.values.reduce(0, +)
            let shown = hosts.prefix(Self.listed).map { host in
                "\(Escaping.terminal(host.key)) (\(host.value)\(hostCauses[host.key].map { ", \($0)" } ?? ""))"
            }
            let more = hosts.count > Self.listed ? ", and \(hosts.count - Self.listed) more" : ""
            text +=
                "sdfetch: \(hosts.count) host\(hosts.count == 1 ? "" : "s") down, "
                + "\(total) URL\(total == 1 ? "" : "s") failed host-down: \(shown.joined(separator: ", "))\(more)\n"
        }
        let unresolved = downHosts.filter { $0.kind == .dns }.reduce(dnsFailures) { $0 + (downCounts[$1.host] ?? 0) }
        if unresolved >= 2, unresolved * 2 > urls {
            text +=
                "sdfetch: most URLs failed because their host names do not resolve (\(unresolved) of \(urls)):"
                + " check the network connection and the DNS settings (/etc/resolv.conf)\n"
        }
        let slow = slowHosts.filter { $0.transfers >= Self.slowMinimum }.prefix(Self.slowListed)
        if !slow.isEmpty {
            // Plain words: each host, how long its answers took, and of how many.
            for host in slow {
                text +=
                    "sdfetch: slow host: \(Escaping.terminal(host.host)) took "
                    + "\(DecimalText.fixed(host.averageSeconds, places: 1)) s on average for each of "
                    + "\(host.transfers) answers\n"
            }
        }
        return text
    }
}
