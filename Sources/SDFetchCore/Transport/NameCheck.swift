internal import CSDFetchShims
import Glibc
import Synchronization

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
    /// Cancelling the task ends the wait at once with ``Verdict/mayExist`` (Ctrl-C does not
    /// wait for a resolver that does not answer); the thread finishes on its own.
    static func verdict(
        hostAndPort: String, lookUp: @escaping @Sendable (String) -> Verdict = lookUp(_:)
    ) async -> Verdict {
        guard let name = hostName(hostAndPort) else { return .mayExist }
        let answer = Answer()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard answer.wait(continuation) else { return }
                DedicatedThread.start(name: "sdfetch-name") { answer.give(lookUp(name)) }
            }
        } onCancel: {
            answer.give(.mayExist)
        }
    }

    /// The one resumption of a verdict's continuation: by the lookup's thread or by
    /// cancellation, whichever comes first, even when cancellation comes before the wait.
    private final class Answer: Sendable {
        private enum State {
            case idle
            case waiting(CheckedContinuation<Verdict, Never>)
            case given(Verdict)
        }

        private let state = Mutex(State.idle)

        /// Registers `continuation`; false when a verdict was given already (and resumes it).
        func wait(_ continuation: CheckedContinuation<Verdict, Never>) -> Bool {
            let given: Verdict? = state.withLock { state in
                if case .given(let verdict) = state { return verdict }
                state = .waiting(continuation)
                return nil
            }
            guard let given else { return true }
            continuation.resume(returning: given)
            return false
        }

        func give(_ verdict: Verdict) {
            let waiting: CheckedContinuation<Verdict, Never>? = state.withLock { state in
                switch state {
                case .idle:
                    state = .given(verdict)
                    return nil
                case .waiting(let continuation):
                    state = .given(verdict)
                    return continuation
                case .given:
                    return nil
                }
            }
            waiting?.resume(returning: verdict)
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
        hints.ai_family = 0  // any address family
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &list)
        if let list { freeaddrinfo(list) }
        return status == EAI_NONAME || status == CSDFetch_EAI_NODATA() ? .doesNotExist : .mayExist
    }
}
