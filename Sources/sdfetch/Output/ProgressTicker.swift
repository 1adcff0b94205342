import SDFetchCore
import Synchronization

/// Redraws the bar about ten times a second and flushes buffered output, until cancelled.
///
/// The console also redraws the bar right after lines it prints above it; it asks the
/// ticker's ``Painter`` for a fresh line then, so counts under the lines are never the
/// ones from before them.
enum ProgressTicker {
    static let interval = Duration.milliseconds(100)

    static func start(
        progress: RunProgress, console: Console, terminal: Terminal, environment: ProcessEnvironment,
        started: ContinuousClock.Instant, hostsDown: @escaping @Sendable () -> Int = { 0 }
    ) -> Task<Void, Never> {
        let painter = Painter(
            bar: ProgressBar(terminal: terminal), progress: progress, environment: environment, started: started,
            hostsDown: hostsDown)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                if terminal.showsBar { console.showBar(painter.tick(), redraw: painter.current) }
                console.flushIfStale()
            }
        }
    }

    /// The bar and what it reads, behind a lock: the ticker samples and draws, the console
    /// redraws between ticks.
    final class Painter: Sendable {
        /// Guards the bar's rate samples.
        private let bar: Mutex<ProgressBar>
        private let progress: RunProgress
        private let environment: ProcessEnvironment
        private let started: ContinuousClock.Instant
        private let hostsDown: @Sendable () -> Int

        init(
            bar: ProgressBar, progress: RunProgress, environment: ProcessEnvironment, started: ContinuousClock.Instant,
            hostsDown: @escaping @Sendable () -> Int
        ) {
            self.bar = Mutex(bar)
            self.progress = progress
            self.environment = environment
            self.started = started
            self.hostsDown = hostsDown
        }

        /// A new sample, and the line.
        func tick() -> String {
            let (snapshot, elapsed, width, down) = readings()
            return bar.withLock { bar in bar.render(snapshot, elapsed: elapsed, width: width, hostsDown: down) }
        }

        /// The line now, from the samples so far.
        @Sendable func current() -> String {
            let (snapshot, elapsed, width, down) = readings()
            return bar.withLock { bar in bar.line(snapshot, elapsed: elapsed, width: width, hostsDown: down) }
        }

        private func readings() -> (RunProgress.Snapshot, Duration, Int, Int) {
            (progress.snapshot, ContinuousClock.now - started, Terminal.width(environment: environment), hostsDown())
        }
    }
}
