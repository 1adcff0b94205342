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
    /// Failure lines kept for after the bar (only while a bar is shown).
    private(set) var heldFailures = FailureList()
    /// Failures per error kind label, for `--summary`.
    private(set) var errorKinds: [String: Int] = [:]
    /// URLs a server answered with an HTTP status (`--summary`'s `requests`).
    private(set) var requestedURLs = 0
    /// JSON lines waiting for the input's end (their final `duplicates`); nil once it came, or without `--json`.
    private var heldJSON: HeldJSONLines?

    init(console: Console, terminal: Terminal, placer: OutputPlacer?, isJSON: Bool) {
        self.console = console
        self.terminal = terminal
        self.placer = placer
        self.isJSON = isJSON
        self.heldJSON = isJSON ? HeldJSONLines() : nil
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
        case .inputFinished(let duplicates):
            heldJSON?.release(duplicates: duplicates) { console.output($0) }
            heldJSON = nil
        case .finished(let final):
            let (adjusted, interrupted) = (summary.counts, summary.interrupted)
            summary = final
            summary.counts = adjusted
            summary.interrupted = interrupted
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
                        cacheFile, at: placer.template.render(key, format: result.format),
                        placed: result.status == .downloaded ? nil : placed)
                } catch {
                    result.status = .failed
                    result.failure = FetchFailure(.io, error.detail)
                    path = nil
                }
            }
        }
        if let kind = result.failure?.kind, result.status == .failed { errorKinds[kind.label, default: 0] += 1 }
        if result.httpStatus != nil { requestedURLs += 1 }
        let isInterrupted = result.failure?.kind == .interrupted
        if isInterrupted { summary.interrupted += 1 } else { summary.counts[result.status, default: 0] += 1 }
        let line = ResultPrinter.line(result, path: path, json: isJSON)
        if let heldJSON { heldJSON.hold(line, digest: result.key?.digest) } else { console.output(line) }
        // After Ctrl-C every unfinished URL ends `interrupted`: one notice and the summary say it, not a line each.
        guard !isInterrupted, let problem = ResultPrinter.problem(result, terminal: terminal) else { return }
        if terminal.showsBar { heldFailures.add(problem) } else { console.error(problem) }
    }
}
