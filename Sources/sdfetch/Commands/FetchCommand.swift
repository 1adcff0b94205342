import FoundationEssentials
import Glibc
import SDFetchCore

/// `sdfetch [fetch]`: read URL lists, fetch through the cache, report, place `-o` files.
///
/// The single consumer of the run's events: it alone writes result lines and messages
/// (through ``Console``), while a ticker task redraws the bar from ``RunProgress``.
struct FetchCommand: ParsableCommand {
    var sources: [InputSource] = []
    /// `--input-format`, `--url-column`, `--sha256-column`.
    var input = InputOptions()
    var cacheDirectory: String?
    var options = FetchOptions()
    var outputDirectory: String?
    /// `-o FILE` with a single URL argument (curl's reading): the image goes to this file.
    var outputFile: String?
    /// `-o -` with a single URL argument: the image goes to standard output, the result
    /// line to standard error (``StandardOutputDelivery``).
    var isStreaming = false
    /// URL arguments in order, gathered into one ``InputSource/list(name:_:)`` at validation.
    var urlArguments: [String] = []
    /// `--link`: hard links under `-o` instead of reflinks or copies.
    var isLinking = false
    /// `--name`: how `-o` names files.
    var nameTemplate = NameTemplate.standard
    /// `--resize` and its companions; a size of 0: `-o` files are the originals.
    var resize = ResizeOptions(size: 0)
    /// `--resize-format`; nil: `auto`, decided at validation (``resolvedResizeFormat()``).
    var resizeFormat: ResizeFormat?
    var shard: Shard?
    /// `--shard auto`: ``shard`` comes from the job runner's variables at validation.
    var isShardAuto = false
    /// `-v`: notes about retries, redirects, revalidations and waits on standard error.
    var isVerbose = false
    var isJSON = false
    var isQuiet = false
    /// `--fail-on`: the statuses that make the exit status 1.
    var failOn: [FetchStatus] = [.failed, .skipped, .invalid]
    static let defaultFailOn = "failed,skipped,invalid"
    var progress = ProgressMode.auto
    /// `--summary FILE`: the run's totals as one JSON object, apart from the result lines.
    var summaryFile: String?
    /// `summaryFile` as opened when the options were checked.
    var summaryTarget: SummaryTarget?

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let cache: DiskCache
        var placer: OutputPlacer?
        do throws(CacheError) {
            // --offline writes nothing but use records, so a read-only cache still serves.
            cache = try DiskCache(
                directory: resolvedCacheDirectory(in: environment), readOnly: options.offline, waits: ShortWaits.cache)
        } catch {
            return cacheFailure(error)
        }
        warnIfUntrusted(cache)
        if !isQuiet, let warning = resizeWithoutOutputWarning { StandardError.write(warning) }
        // A list long enough to touch most of the 256 index buckets: read them all at once,
        // in parallel with the run's start (64 KiB of URLs is about a thousand lines).
        if sources.contains(where: { $0.isLargeFile(over: 64 << 10) }) { cache.preloadIndex() }
        if let outputFile {
            do throws(OutputError) {
                placer = try OutputPlacer(
                    directory: ProcessEnvironment.absolute(URLArgument.folder(of: outputFile)), isLinking: isLinking,
                    template: nameTemplate)
            } catch {
                StandardError.write("sdfetch: \(Escaping.terminal(error.detail))\n")
                return ExitStatus(error)
            }
        }
        if let outputDirectory {
            // Said plainly here: Foundation's own words for this case are "a file with the same name already exists".
            var status = stat()
            if stat(outputDirectory, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
                let name = Escaping.terminal(outputDirectory)
                StandardError.write("sdfetch: -o \(name): exists and is not a directory\n")
                return .unusableCacheOrInput
            }
            do throws(OutputError) {
                placer = try OutputPlacer(
                    directory: ProcessEnvironment.absolute(outputDirectory), isLinking: isLinking,
                    template: nameTemplate)
            } catch {
                StandardError.write("sdfetch: \(Escaping.terminal(error.detail))\n")
                return ExitStatus(error)
            }
        }
        let terminal = Terminal(environment: environment, progress: progress, quiet: isQuiet)
        // Ctrl-C means exit 130 until the very end: after the run come the summary, the trim
        // and the output still queued for a reader, each of which may take a while.
        let trap = SignalTrap(notice: "sdfetch: interrupted, finishing (press Ctrl-C again to quit at once)\n")
        defer { trap.remove() }
        // The console's writer thread lives for the command: what is queued is written, and the
        // thread joined, before the exit status goes back to `@main`.
        let resultsDescriptor = isStreaming ? STDERR_FILENO : STDOUT_FILENO
        let status = await withConsole(environment: environment, output: resultsDescriptor) { console in
            let started = ContinuousClock.now
            let (consumer, interrupted) = await fetch(
                cache: cache, placer: placer, terminal: terminal, console: console, environment: environment,
                trap: trap)
            return await finish(
                consumer, interrupted: interrupted, elapsed: ContinuousClock.now - started, cache: cache,
                terminal: terminal, console: console)
        }
        return trap.wasInterrupted ? .interrupted : status
    }

    /// The run itself: the fetcher's scope, what a signal stops, the ticker and the one
    /// consumer of the run's events.
    private func fetch(
        cache: DiskCache, placer: OutputPlacer?, terminal: Terminal, console: Console, environment: ProcessEnvironment,
        trap: SignalTrap
    ) async -> (EventConsumer, interrupted: Bool) {
        var options = self.options
        if let allowed = DescriptorLimit.concurrencyAllowed(), options.concurrency > allowed.concurrency {
            if !isQuiet {
                console.error(
                    "sdfetch: -j \(options.concurrency) lowered to \(allowed.concurrency): "
                        + "\(allowed.openFiles) open files allowed (ulimit -n)\n")
            }
            options.concurrency = allowed.concurrency
        }
        let started = ContinuousClock.now
        let notes = isVerbose ? VerboseNotes.printer(console) : nil
        // The engine lives for the run only: shut down (its thread joined) on the way out.
        // Resizes run on threads of their own, for the run (``OutputDelivery``).
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return await withBlockingPool(threads: cores, name: "sdfetch-resize") { resizes in
            await withFetcher(options: options, cache: cache, notes: notes) { fetcher in
                let reader = URLListReader(sources: sources, options: input)
                let resizer = resize.size > 0 ? ImageResizer(options: resize, maxPixels: options.maxPixels) : nil
                let fileName = outputFile.map(URLArgument.fileName(of:))
                let resizing = resizer.map { ($0, resizes) }
                let delivery: (any ResultDelivery)? =
                    isStreaming
                    ? StandardOutputDelivery(cache: cache, resizing: resizing)
                    : placer.map {
                        OutputDelivery(placer: $0, cache: cache, fixedName: fileName, resizing: resizing, notes: notes)
                    }
                let fetchRun = FetchRun(fetcher: fetcher, sources: sources, shard: shard, delivery: delivery)
                // On the signal path: nothing here may wait for the console's writer (blocked on a
                // full stdout pipe, perhaps), hence ``Console/notice(_:)``. Over before the fetcher
                // shuts down.
                let stop: @Sendable () -> Void = {
                    reader.cancel()
                    fetcher.cancelAll()
                }
                let consumer = await trap.response.during(stop: stop, say: { console.notice($0) }) {
                    let ticker = ProgressTicker.start(
                        progress: fetchRun.progress, console: console, terminal: terminal, environment: environment,
                        started: started, hostsDown: { fetcher.downHostCount })
                    var consumer = EventConsumer(console: console, terminal: terminal, isJSON: isJSON, isQuiet: isQuiet)
                    consumer.hintsTables = input.format == nil
                    if resize.size == 0, let outputFile, let format = OutputFileFormat.of(outputFile) {
                        consumer.outputFileFormat = (outputFile, format)
                    }
                    if isVerbose && !options.keyQueryFilter.patterns.isEmpty {
                        consumer.keyPatterns = UnmatchedKeyPatterns(options.keyQueryFilter)
                    }
                    await fetchRun.run(reader: reader) { event in
                        await consumer.handle(event)
                        await console.waitForRoom()  // a blocked stdout holds the run back, not memory
                    }
                    consumer.hosts.downHosts = fetcher.downHosts
                    consumer.remote = fetcher.remote
                    if trap.wasInterrupted {
                        let summary = consumer.summary
                        let reported = FetchStatus.allCases.reduce(summary.interrupted) { $0 + summary.count($1) }
                        consumer.notReached = fetchRun.progress.linesNotReached(reported: reported)
                    }
                    consumer.hosts.slowHosts = fetcher.slowHosts(minimum: HostReport.slowMinimum)
                    ticker.cancel()
                    await ticker.value
                    return consumer
                }
                console.removeBar()
                console.flush()
                console.error(consumer.heldFailures.text)
                return (consumer, trap.wasInterrupted)
            }
        }
    }

    /// After the run: the summary, the uses noted (LRU), `--max-cache-size` (and a warning
    /// when the run's own entries do not fit under it), then `--summary`, which reports the
    /// trim too. `--summary FILE` (perhaps a FIFO) and the trim (perhaps waiting on another
    /// process's maintenance lock) run through ``BlockingWork``, off the cooperative pool.
    private func finish(
        _ consumer: EventConsumer, interrupted: Bool, elapsed: Duration, cache: DiskCache, terminal: Terminal,
        console: Console
    ) async -> ExitStatus {
        // Nothing was read (`sdfetch missing.txt`): the error says it all, a line of zeros would not help.
        let nothingRead =
            consumer.summary.unreadableInputs > 0 && consumer.summary.counts.isEmpty
            && consumer.summary.interrupted == 0 && consumer.summary.duplicates == 0
        if !isQuiet && !nothingRead {
            let line = RunReport.summary(
                consumer.summary, elapsed: elapsed, interrupted: interrupted, notReached: consumer.notReached,
                remote: consumer.remote?.counts, terminal: terminal)
            console.error(line)
            console.error(consumer.hosts.closingText)
        }
        if !interrupted, let patterns = consumer.keyPatterns { console.error(patterns.text) }
        cache.flushUses()  // appends to index buckets: the page cache's, no lock
        var overflow: CacheOverflow?
        if !interrupted && !options.offline {
            let report = await CacheLimit.enforce(
                on: cache, maxBytes: options.maxCacheSize, protecting: consumer.summary.usedKeys, verbose: isVerbose,
                console: console)
            overflow = report.flatMap { CacheOverflow($0, maxBytes: options.maxCacheSize) }
        }
        // Not silenced by -q: the cache is failing at its job, run after run.
        if let overflow { console.error("sdfetch: warning: \(overflow.sentence)\n") }
        for warning in consumer.remoteWarnings { console.error("sdfetch: warning: \(Escaping.terminal(warning))\n") }
        var summaryFailed = false
        if let summaryFile, let summaryTarget {
            let text = SummaryFile.json(
                consumer, elapsed: elapsed, interrupted: interrupted, maxCacheSize: options.maxCacheSize,
                overflow: overflow)
            if summaryTarget == .standardError || summaryTarget == .stream(STDERR_FILENO) {
                console.error(text)  // after the summary line, in order with everything on stderr
            } else if summaryTarget == .stream(STDOUT_FILENO) {
                console.output(text)  // after the result lines
            } else if let reason = await BlockingWork.run("sdfetch-summary", { summaryTarget.write(text) }) {
                console.error("sdfetch: cannot write --summary \(Escaping.terminal(summaryFile)): \(reason)\n")
                summaryFailed = true
            }
        }
        console.flush()
        if let reason = OutputFailure.reason {
            console.error("sdfetch: cannot write standard output: \(reason); results were lost\n")
        }
        let status = ExitStatus(run: consumer.summary, interrupted: interrupted, failOn: failOn)
        guard status != .interrupted, summaryFailed || OutputFailure.reason != nil else { return status }
        return .unusableCacheOrInput
    }
}
