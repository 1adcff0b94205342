import SDFetchCore

/// Redraws the bar about ten times a second and flushes buffered output, until cancelled.
enum ProgressTicker {
    static let interval = Duration.milliseconds(100)

    static func start(
        progress: RunProgress, console: Console, terminal: Terminal, environment: ProcessEnvironment,
        started: ContinuousClock.Instant, hostsDown: @escaping @Sendable () -> Int = { 0 }
    ) -> Task<Void, Never> {
        Task {
            var bar = ProgressBar(terminal: terminal)
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                if terminal.showsBar {
                    let line = bar.render(
                        progress.snapshot, elapsed: ContinuousClock.now - started,
                        width: Terminal.width(environment: environment), hostsDown: hostsDown())
                    console.showBar(line)
                }
                console.flushIfStale()
            }
        }
    }
}
