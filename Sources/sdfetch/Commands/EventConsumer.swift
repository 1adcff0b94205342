import SDFetchCore

/// Turns each ``FetchEvent`` into output: `-o` placement, the result line, problem messages.
///
/// Owned by the fetch command's consuming loop, never shared. Keeps its own tally so a
/// result turned into `failed` by an `-o` write error is counted as such.
struct EventConsumer {
    let console: Console
    let terminal: Terminal
    let placer: OutputPlacer?
    let isJSON: Bool
    /// The run's summary, with counts re-tallied here (an `-o` failure turns a result `failed`).
    private(set) var summary = RunSummary()

    init(console: Console, terminal: Terminal, placer: OutputPlacer?, isJSON: Bool) {
        self.console = console
        self.terminal = terminal
        self.placer = placer
        self.isJSON = isJSON
    }

    mutating func handle(_ event: FetchEvent) {
        switch event {
        case .results(let results):
            for result in results { handle(result) }
        case .unreadableInput(let source, let detail):
            // `sdfetch clen` reads a file named "clen": point at the command that was probably meant.
            var hint = ""
            if !source.contains("/"), let word = EditDistance.closest(to: source, among: CommandLineParser.commandWords) {
                hint = " (did you mean 'sdfetch \(word)'?)"
            }
            console.error("sdfetch: cannot read \(Escaping.terminal(source)): \(Escaping.terminal(detail))\(hint)\n")
        case .finished(let final):
            let adjusted = summary.counts
            summary = final
            summary.counts = adjusted
        }
    }

    private mutating func handle(_ result: FetchResult) {
        var result = result
        var path = result.path
        if let key = result.key, result.status.isSuccess {
            if let placer, let cacheFile = result.path {
                do throws(OutputError) {
                    let placed = result.fileStamp.map { (bytes: result.bytes, stamp: $0) }
                    path = try placer.place(
                        cacheFile, as: OutputNamer.name(for: key, format: result.format),
                        placed: result.status == .downloaded ? nil : placed)
                } catch {
                    result.status = .failed
                    result.failure = FetchFailure(.io, error.detail)
                    path = nil
                }
            }
        }
        summary.counts[result.status, default: 0] += 1
        console.output(ResultPrinter.line(result, path: path, json: isJSON))
        // After Ctrl-C every unfinished URL ends `interrupted`: one notice and the summary say it, not a line each.
        if !terminal.showsBar, result.failure?.kind != .interrupted, let problem = ResultPrinter.problem(result, terminal: terminal) {
            console.error(problem)
        }
    }
}
