import Dispatch
import FoundationEssentials
import Glibc
import SDFetchCore
import Synchronization

/// Turns SIGINT and SIGTERM into a clean stop of the command (exit 130).
///
/// The trap lives for the whole command, from before the run to after the last queued
/// output is written: a signal at any point of it ends in exit 130. The first signal says so
/// and stops the run when one is going on (``InterruptResponse``: stop reading input, cancel
/// transfers); the run then drains normally, so every result is reported and no partial
/// file is left (the cache writes atomically). A second signal restores the default action
/// and re-raises it, for a user who does not want to wait. Only the CLI installs handlers
/// (SDFetchCore.docc,
/// SDFetchCore.md).
///
/// The drain is bounded: if the process is still running ``shutdownGraceSeconds`` after the first
/// signal (a writer stuck on a full stdout pipe, a decode that will not stop, a trim waiting
/// for another process's lock), it exits 130 at once. That is safe for the same reason a
/// `kill -9` is: entries appear only by rename.
///
/// Why the whole command: after the run's events come the summary, the cache trim and the
/// writes still queued for a full stdout pipe, each of which may take a while, and a signal
/// meeting the default action there would kill the process outright (no `--summary`, no
/// 130, which to a test looks like one signal counted twice).
///
/// Dispatch installs its own handler for a signal source later, from its manager thread.
/// Until then the default action stands (a signal ends the process, as it does before any
/// run), and `init` returns only once the handlers are in place, so the run starts trapped.
/// Setting the dispositions to ignore first, as this type once did, lost a Ctrl-C that came
/// in between: the run then went on to its end.
final class SignalTrap: Sendable {
    /// Signals received so far; its own object so the handlers need not capture `self`.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private let received = Counter()
    /// The notice and the run's stop, per phase.
    let response: InterruptResponse
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// How long a clean shutdown may take after the first signal (exit 130 within 2 s:
    /// `FetchCommandTests`' SIGINT test); a debug build's tests may shorten it (``ShortWaits``).
    static var shutdownGraceSeconds: Double { ShortWaits.shutdownGraceSeconds }

    private static let queue = DispatchQueue(label: "sdfetch.signals")

    /// Exits 130 once ``shutdownGrace`` has passed; a plain thread, so no busy pool delays it.
    private static func startWatchdog() {
        DedicatedThread.start(name: "sdfetch-shutdown-watchdog") {
            usleep(UInt32(shutdownGraceSeconds * 1_000_000))
            _exit(130)
        }
    }

    /// Whether a signal arrived.
    var wasInterrupted: Bool { received.value.load(ordering: .acquiring) > 0 }

    /// `notice`: the line said on the first signal.
    init(notice: String) {
        let response = InterruptResponse(notice: notice)
        self.response = response
        var made: [any DispatchSourceSignal] = []
        for number in Self.signals {
            // A queue of its own: serial queues run on dispatch's overcommitting threads, so
            // the handler runs even while every worker of the global pool is blocked (a
            // writer parked on a full stdout pipe, the ticker waiting for the console).
            let source = DispatchSource.makeSignalSource(signal: number, queue: SignalTrap.queue)
            source.setEventHandler { [received, response, source] in
                // Dispatch coalesces signals that arrive before the handler runs: `data` counts them,
                // so two quick Ctrl-Cs still mean "quit at once".
                let arrivals = max(1, Int(source.data))
                let total = received.value.add(arrivals, ordering: .acquiringAndReleasing).newValue
                if total == 1 {
                    SignalTrap.startWatchdog()
                    response.firstSignal()
                } else {
                    SignalTrap.dieBy(number)
                }
            }
            source.resume()
            made.append(source)
        }
        sources = Mutex(made)
        Self.waitForHandlers()
    }

    private static let signals = [SIGINT, SIGTERM]

    /// Waits until dispatch's handlers are in place, normally well under a millisecond; after
    /// two seconds it stops waiting, and the default actions stay in force.
    ///
    /// A short sleep on the calling thread, not `Task.sleep`: a dispatch timer needs a
    /// descriptor (`timerfd`), which a run started at its descriptor limit does not get, and
    /// its task then never woke.
    private static func waitForHandlers() {
        let deadline = ContinuousClock.now + .seconds(2)
        while !signals.allSatisfy(isCaught), ContinuousClock.now < deadline { usleep(100) }
    }

    /// Whether `number` has a handler (neither the default action nor ignored).
    private static func isCaught(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0 else { return false }
        let handler = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        return handler != unsafeBitCast(SIG_DFL, to: Int.self) && handler != unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Ends the process by `number` with its default action, as if no handler were installed.
    ///
    /// Dispatch's worker threads block signals, so a plain `raise` here would stay pending
    /// forever: the signal is unblocked on this thread first. `_exit` is the fallback.
    private static func dieBy(_ number: Int32) -> Never {
        signal(number, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        _exit(128 + number)
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
