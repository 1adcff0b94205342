internal import CSDFetchShims
import Glibc

/// Asks the system's resolver once more about a host name curl could not resolve, to tell a
/// name that does not exist from a resolver that did not answer.
///
/// Why: libcurl reports both as "could not resolve host". A name the resolver says does not
/// exist (NXDOMAIN, or no address at all) will not exist a moment later, so its host is given
/// up at once and its other URLs fail `host-down` without dialling. A resolver that timed out
/// or failed (a burst of 256 lookups can overflow a local resolver's queue) may answer the
/// next time, so that failure is retried like a refused connection and counts towards
/// `--host-failures` (<doc:Fetching#Retries-and-timeouts>).
enum NameCheck {
    enum Verdict: Equatable {
        /// The resolver answered that the name has no address.
        case doesNotExist
        /// It resolves now, or the resolver did not give a definite answer.
        case mayExist
    }

    /// The verdict for the host of `hostAndPort` (`name`, `name:port` or `[v6]:port`). The
    /// lookup blocks for up to the resolver's timeout, so it runs on a thread of its own,
    /// as libcurl's own lookups do, and the calling task waits without holding a thread.
    static func verdict(hostAndPort: String) async -> Verdict {
        guard let name = hostName(hostAndPort) else { return .mayExist }
        return await withCheckedContinuation { continuation in
            DedicatedThread.start(name: "sdfetch-name") { continuation.resume(returning: lookUp(name)) }
        }
    }

    /// The name part, or nil for an address literal (which needs no resolver).
    static func hostName(_ hostAndPort: String) -> String? {
        guard !hostAndPort.hasPrefix("["), !hostAndPort.isEmpty else { return nil }
        var name = Substring(hostAndPort)
        if let colon = name.lastIndex(of: ":"), name[name.index(after: colon)...].allSatisfy(\.isNumber) {
            name = name[..<colon]
        }
        return name.isEmpty || name.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : String(name)
    }

    /// One `getaddrinfo` for any address family, as curl's threaded resolver asks.
    static func lookUp(_ name: String) -> Verdict {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &list)
        if let list { freeaddrinfo(list) }
        return status == EAI_NONAME || status == CSDFetch_EAI_NODATA() ? .doesNotExist : .mayExist
    }
}
