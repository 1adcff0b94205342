import FoundationEssentials
import Glibc
import SDFetchCore
import Synchronization

/// What the first SIGINT or SIGTERM does, besides ``SignalTrap``'s watchdog: say once that
/// the command is finishing, and stop the run when one is going on.
///
/// The two change with the command's phase. During the run (``during(stop:say:_:)``) the
/// run's `stop` cancels its input and transfers, and the notice goes through the console,
/// which keeps it clear of the progress bar. Before and after the run (the summary, the cache
/// trim, output still queued for a reader) there is nothing to stop, and the notice is
/// written straight to standard error by a thread of its own, as a writer blocked on a
/// full pipe must not hold it.
///
/// Everything runs under one lock, held only by these calls: ``during(stop:say:_:)``
/// returns once its `stop` can no longer run, so `stop` may use what the run's scope owns
/// (the fetcher, whose engine is shut down right after). `stop` and `say` must not wait on
/// anything.
final class InterruptResponse: Sendable {
    private struct State {
        var stop: (@Sendable () -> Void)?
        var say: (@Sendable (String) -> Void)?
        var hasSaid = false
        var hasStopped = false
        var isInterrupted = false
    }

    private let notice: String
    private let state = Mutex(State())

    /// `notice`: the line (with its newline) said on the first signal.
    init(notice: String) {
        self.notice = notice
    }

    /// The first signal: says the notice and stops the run, each once.
    func firstSignal() {
        state.withLock { state in
            state.isInterrupted = true
            respond(&state)
        }
    }

    /// Runs `body` with `stop` and `say` in force; a signal that came before runs `stop` at once.
    func during<T>(
        stop: @escaping @Sendable () -> Void, say: @escaping @Sendable (String) -> Void,
        isolation: isolated (any Actor)? = #isolation, _ body: () async -> T
    ) async -> T {
        state.withLock { state in
            state.stop = stop
            state.say = say
            state.hasStopped = false
            if state.isInterrupted { respond(&state) }
        }
        let result = await body()
        state.withLock { state in
            state.stop = nil
            state.say = nil
        }
        return result
    }

    private func respond(_ state: inout State) {
        if !state.hasSaid {
            state.hasSaid = true
            if let say = state.say {
                say(notice)
            } else {
                let text = notice
                DedicatedThread.start(name: "sdfetch-stderr") { FileDescriptorWriter.write(text, to: STDERR_FILENO) }
            }
        }
        if !state.hasStopped, let stop = state.stop {
            state.hasStopped = true
            stop()
        }
    }
}
