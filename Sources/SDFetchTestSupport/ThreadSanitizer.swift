import FoundationEssentials
import Glibc

/// Whether this test process runs under ThreadSanitizer (`make tsan`).
///
/// A few tests hold responses back for a fixed time so that every request of a run is in
/// at once; a child built with TSan starts its transfers 5-15 times slower, so those waits
/// are longer there. Asked of the loader (the runtime's `__tsan_init` is exported), not of
/// an environment variable, so the answer cannot drift from the build.
public enum ThreadSanitizer {
    public static let isActive = dlsym(nil, "__tsan_init") != nil

    /// `duration`, or ten times it under ThreadSanitizer.
    public static func scaled(_ duration: Duration) -> Duration {
        isActive ? duration * 10 : duration
    }
}
