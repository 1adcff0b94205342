import FoundationEssentials
import SDFetchCore

/// The waits a debug build shortens for the test suite: with `SDFETCH_TEST_SHORT_WAITS=1` in
/// its environment, a stuck lock holder and a fresh writer's temporary are waited out for
/// 0.2 s and a shutdown for 0.2 s, so the tests that prove those waits end (for example
/// `MaintenanceWaitTests`) need not sit through them. A release build never reads the variable.
enum ShortWaits {
    static let isOn: Bool = {
        #if DEBUG
            return ProcessInfo.processInfo.environment["SDFETCH_TEST_SHORT_WAITS"] == "1"
        #else
            return false
        #endif
    }()

    /// How long a clean shutdown may take after the first signal (``SignalTrap``).
    static var shutdownGraceSeconds: Double { isOn ? 0.2 : 1.0 }

    /// The waits every cache this process opens uses.
    static var cache: CacheWaits {
        isOn ? CacheWaits(bucketLock: .milliseconds(200), writerGrace: .milliseconds(200)) : .standard
    }
}
