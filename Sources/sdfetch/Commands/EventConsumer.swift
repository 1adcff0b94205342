import SDFetchCore

/// Turns each ``FetchEvent`` into output: the result line and problem messages.
///
/// Owned by the fetch command's consuming loop, never shared. Counts nothing: results
/// arrive settled (their `-o` copy made, see ``OutputDelivery``) and counted by the run,
/// whose summary comes with `finished`.
struct EventConsumer {
    let console: Console
    let terminal: Terminal
    let isJSON: Bool
    /// The run's summary, once `finished` came.
    private(set) var summary = RunSummary()
    /// Failure lines kept for after the bar (only while a bar is shown).
    private(set) var heldFailures = FailureList()
    /// Failures per host: one line per host down, and the closing lines about hosts.
    var hosts = HostReport()
    /// JSON lines waiting for the input's end (their final `duplicates`); nil once it came, or without `--json`.
    private var heldJSON: HeldJSONLines?
    /// Repeated rows whose key's result came after the input's end (its fetch was under
    /// way): written after that result's line, memory bounded.
    private let waitingRows = WaitingRows()

    init(console: Console, terminal: Terminal, isJSON: Bool) {
        self.console = console
        self.terminal = terminal
        self.isJSON = isJSON
        self.heldJSON = isJSON ? HeldJSONLines() : nil
    }

    /// Async only for the held JSON lines' release, which waits for room in the console's
    /// queue as it goes (a whole run's lines may be held).
    mutating func handle(_ event: FetchEvent) async {
        switch event {
        case .results(let results):
            for result in results { handle(result) }
        case .repeatedRows(let rows):
            // Text output has one line per unique URL: a repeated row adds nothing to it.
            guard isJSON else { return }
            for row in rows {
                let tail = ResultPrinter.rowTail(source: row.source, fields: row.fields)
                if let heldJSON {
                    heldJSON.holdRow(tail, digest: row.digest)
                } else {
                    waitingRows.add(tail, digest: row.digest)
                }
            }
        case .unreadableInput(let source, let detail):
            // `sdfetch clen` reads a file named "clen": point at the command that was probably meant.
            var hint = ""
            if !source.contains("/" as Character), let word = EditDistance.closest(to: source, among: CommandLineParser.commandWords) {
                hint = " (did you mean 'sdfetch \(word)'?)"
            }
            console.error("sdfetch: cannot read \(Escaping.terminal(source)): \(Escaping.terminal(detail))\(hint)\n")
        case .inputFinished(let duplicates):
            if let heldJSON {
                await heldJSON.release(duplicates: duplicates, waiting: waitingRows) { line in
                    console.output(line)
                    await console.waitForRoom()
                }
            }
            heldJSON = nil
        case .finished(let final):
            await waitingRows.finish { line in
                console.output(line)
                await console.waitForRoom()
            }
            summary = final
        }
    }

    private mutating func handle(_ result: FetchResult) {
        let isInterrupted = result.failure?.kind == .interrupted
        let line = ResultPrinter.line(result, path: result.path, json: isJSON)
        if let heldJSON {
            heldJSON.hold(line, digest: result.key?.digest)
        } else {
            console.output(line)
            if let digest = result.key?.digest, !waitingRows.isEmpty {
                for row in waitingRows.lines(after: line, digest: digest) { console.output(row) }
            }
        }
        // After Ctrl-C every unfinished URL ends `interrupted`: one notice and the summary say it, not a line each.
        guard !isInterrupted else { return }
        let hostLine = hosts.note(result)  // every result: "most URLs" is a share of the run
        guard var problem = ResultPrinter.problem(result, terminal: terminal) else { return }
        switch hostLine {
        case .own: break
        case .host(let line): problem = line
        case .folded: return
        }
        if terminal.showsBar { heldFailures.add(problem) } else { console.error(problem) }
    }
}
