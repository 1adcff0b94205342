import Foundation

/// `-j` capped to what the open-file limit (`ulimit -n`) allows (issue 16): past it, sockets
/// and cache files fail with `EMFILE` and every URL beyond the limit is lost.
enum DescriptorLimit {
    /// Descriptors kept for standard streams, the cache's locks and directories, curl's own.
    static let reserved = 32
    /// Each transfer holds a socket and, while it is stored, an entry file.
    static let perTransfer = 2

    /// The largest `-j` the soft limit supports, or nil when the limit is no constraint.
    static func maxConcurrency() -> Int? {
        guard let limit = softLimit() else { return nil }
        let available = Int(clamping: limit) - reserved
        return max(1, available / perTransfer)
    }

    /// `ulimit -n`, or nil when unlimited or unknown.
    private static func softLimit() -> UInt64? {
        var limit = rlimit()
        // Glibc imports the resource as an enum; getrlimit takes its raw Int32.
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max  // RLIM_INFINITY
        else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// `requested`, or the cap with a notice when the limit is lower.
    static func cap(_ requested: Int, notify: (String) -> Void) -> Int {
        guard let maximum = maxConcurrency(), requested > maximum else { return requested }
        let limit = softLimit().map(String.init) ?? "low"
        notify("sdfetch: -j \(requested) lowered to \(maximum): the open-file limit (ulimit -n) is \(limit)\n")
        return maximum
    }
}
