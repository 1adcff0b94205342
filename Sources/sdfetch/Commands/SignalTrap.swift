import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM into a clean stop of the run (exit 130).
///
/// The first signal calls `onInterrupt` (stop reading input, cancel transfers); the run then
/// drains normally, so every result is reported and no partial file is left (the cache
/// writes atomically). A second signal restores the default action and re-raises it, for
/// a user who does not want to wait. Only the CLI installs handlers (STYLE §4).
///
/// The drain is bounded: if the process is still running ``shutdownGrace`` after the first
/// signal (a writer stuck on a full stdout pipe, a decode that will not stop), it exits 130
/// at once. That is safe for the same reason a `kill -9` is: entries appear only by rename.
/// `onInterrupt` must not wait on anything (no output lock), or a second signal, handled on
/// the same serial source, would go unanswered.
/// The default dispositions are set to ignore so the dispatch sources alone see the signals.
final class SignalTrap: Sendable {
    /// Signals received so far; its own object so the handlers need not capture `self`.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private let received = Counter()
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// How long a clean shutdown may take after the first signal (SPEC: exit 130 within 2 s).
    static let shutdownGrace: DispatchTimeInterval = .milliseconds(1500)

    /// Whether a signal arrived.
    var wasInterrupted: Bool { received.value.load(ordering: .acquiring) > 0 }

    init(onInterrupt: @escaping @Sendable () -> Void) {
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in
                if received.value.add(1, ordering: .acquiringAndReleasing).newValue == 1 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + SignalTrap.shutdownGrace) { _exit(130) }
                    onInterrupt()
                } else {
                    signal(number, SIG_DFL)
                    raise(number)
                }
            }
            source.resume()
            made.append(source)
        }
        sources = Mutex(made)
    }

    /// Stops listening and restores the default dispositions.
    func remove() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources.removeAll()
        }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
