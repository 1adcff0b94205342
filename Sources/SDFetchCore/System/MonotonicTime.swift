import FoundationEssentials
import Glibc

/// `CLOCK_MONOTONIC` in nanoseconds: cheap (vDSO) and immune to wall-clock jumps.
enum MonotonicTime {
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
