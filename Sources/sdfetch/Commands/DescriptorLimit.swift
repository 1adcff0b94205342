import FoundationEssentials
import Glibc
import SDFetchCore

/// How many transfers the open-file limit allows (`-j` is capped to it, with a notice).
///
/// Each transfer holds a socket, often a resolver's socket pair and, while storing, an
/// entry file: past `RLIMIT_NOFILE` connects fail with `EMFILE`, which used to be blamed on
/// the server and end in `host-down` (`TransportProcessTests`, `ulimit -n 40`). The soft
/// limit is first raised towards the hard one, as most network tools do; what it still does
/// not cover lowers `-j`.
enum DescriptorLimit {
    /// Descriptors one transfer may hold at once.
    static let perTransfer = CurlEngine.descriptorsPerTransfer
    /// Descriptors kept for everything else: standard streams, curl's wake-up pipe, locks, inputs.
    static let reserved = CurlEngine.descriptorsReserved
    /// No need to raise the soft limit past this: 1024 transfers fit well within it.
    static let wanted: rlim_t = 1 << 16

    /// The concurrency the limit allows and the limit itself, or nil when it could not be read.
    static func concurrencyAllowed() -> (concurrency: Int, openFiles: Int)? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < wanted, limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, wanted)
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is the largest rlim_t, so `min` covers it.
        let openFiles = Int(min(limit.rlim_cur, wanted))
        // A quarter more for the engine's probes of new hosts (`HostProbes`), which take
        // up to four times as many again when the limit leaves room.
        return (max(1, (openFiles - reserved) * 4 / (perTransfer * 5)), openFiles)
    }
}
