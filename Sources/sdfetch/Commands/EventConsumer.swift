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
    /// `-q`: no line on standard error for a `skipped` URL or a host an earlier run found
    /// down, each reported when it was recorded (``isLeftToLaterRuns(_:)``).
    let isQuiet: Bool
    /// No `--input-format` was given: a list read as lines that looks like a table gets a hint.
    var hintsTables = false
    /// Sources already hinted at, so a table read as lines gets one hint, not one a row.
    private var hintedSources: Set<Substring> = []
    /// The run's summary, once `finished` came.
    private(set) var summary = RunSummary()
    /// Failure lines kept for after the bar (only while a bar is shown).
    private(set) var heldFailures = FailureList()
    /// Failures per host: one line per host down, and the closing lines about hosts.
    var hosts = HostReport()
    /// Input lines an interrupted run never reached (``RunProgress/linesNotReached``): 0
    /// for a run that read its input, nil when unknown (a pipe).
    var notReached: Int? = 0
    /// `--remote-cache`'s tier, read once the fetcher has shut down (its uploads counted).
    var remote: RemoteTier?
    /// JSON lines waiting for the input's end (their final `duplicates`); nil once it came, or without `--json`.
    private var heldJSON: HeldJSONLines?
    /// `-o FILE` without `--resize`, and the format FILE's extension names: an image of
    /// another format is written as fetched, with a warning.
    var outputFileFormat: (file: String, format: ImageFormat)?
    /// `-v` with `--key-ignore-query`: the patterns no result's URL matched yet.
    var keyPatterns: UnmatchedKeyPatterns?
    /// Repeated rows whose key's result came after the input's end (its fetch was under
    /// way): written after that result's line, memory bounded.
    private let waitingRows = WaitingRows()

    init(console: Console, terminal: Terminal, isJSON: Bool, isQuiet: Bool = false) {
        self.console = console
        self.terminal = terminal
        self.isJSON = isJSON
        self.isQuiet = isQuiet
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
            if !source.contains("/" as Character),
                let word = EditDistance.closest(to: source, among: CommandLineParser.commandWords)
            {
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
        keyPatterns?.note(result)
        if let named = outputFileFormat, result.status.isSuccess, let actual = result.format, actual != named.format {
            console.error(
                "sdfetch: warning: \(Escaping.terminal(named.file)) holds the \(actual.rawValue.uppercased()) image "
                    + "as fetched, not \(named.format.rawValue.uppercased()) as its name says (--resize converts)\n")
        }
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
        guard !(isQuiet && Self.isLeftToLaterRuns(result)) else { return }
        guard var problem = ResultPrinter.problem(result, terminal: terminal) else { return }
        switch hostLine {
        case .own: break
        case .host(let line): problem = line
        case .folded: return
        }
        if let hint = tableHint(for: result) { problem += hint }
        if terminal.showsBar { heldFailures.add(problem) } else { console.error(problem) }
    }

    /// `-q` for cron, which mails whatever a job prints: a known-bad URL was reported on the
    /// run that recorded it, and so was a host an earlier run found down and the cache
    /// remembers (`--host-down-for`): a host down for a day is told by the run that finds it
    /// down, not again by each run within the memory. Every other failure is told, as `-q`
    /// silences only the progress and the summary. Each stays in the result lines and the
    /// exit status.
    static func isLeftToLaterRuns(_ result: FetchResult) -> Bool {
        if result.status == .skipped { return true }
        return result.status == .failed && result.failure?.isHostRemembered == true
    }

    /// A hint after the first invalid line of a source read as lines that holds a comma or a
    /// tab (`url,caption` piped without `--input-format`): every row would be `invalid`.
    private mutating func tableHint(for result: FetchResult) -> String? {
        guard hintsTables, result.status == .invalid, result.failure?.kind == .invalidURL,
            let place = result.source, let colon = place.lastIndex(of: ":")
        else { return nil }
        let source = place[..<colon]
        let separator =
            result.url.contains("," as Character) ? "csv" : result.url.contains("\t" as Character) ? "tsv" : nil
        guard let separator, hintedSources.insert(source).inserted else { return nil }
        let name = source == "-" ? "standard input" : Escaping.terminal(String(source))
        return "sdfetch: hint: \(name) looks like a \(separator.uppercased()) table, read as one URL a line: "
            + "give --input-format \(separator) (and --url-column NAME if its URL column is not 'url')\n"
    }
}

extension EventConsumer {
    /// One sentence per remote cache switched off in the run (its URL's password masked).
    var remoteWarnings: [String] {
        (remote?.warnings ?? []).map {
            "remote cache \($0.remote) switched off for this run after repeated errors (\($0.detail)); "
                + "the origins were asked instead"
        }
    }
}
