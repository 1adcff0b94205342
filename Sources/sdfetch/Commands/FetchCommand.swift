import AsyncAlgorithms
import Foundation
import SDFetchCore

/// `sdfetch [fetch]`: read URL lists, fetch through the cache, report, place `-o` files.
///
/// The single consumer of the run's events: it alone writes result lines and messages
/// (through ``Console``), while a ticker task redraws the bar from ``RunProgress``.
struct FetchCommand: ParsableCommand {
    var sources: [InputSource] = []
    var cacheDirectory: String?
    var options = FetchOptions()
    var outputDirectory: String?
    var shard: Shard?
    /// `--shard auto`: ``shard`` comes from the job runner's variables at validation.
    var isShardAuto = false
    /// `-v`: notes about retries, redirects, revalidations and waits on standard error.
    var isVerbose = false
    var isJSON = false
    var isQuiet = false
    var progress = ProgressMode.auto

    func run(in environment: ProcessEnvironment) async -> ExitStatus {
        let cache: DiskCache
        var placer: OutputPlacer?
        do throws(CacheError) {
            cache = try DiskCache(directory: resolvedCacheDirectory(in: environment))
        } catch {
            return cacheFailure(error)
        }
        if let outputDirectory {
            do throws(OutputError) {
                placer = try OutputPlacer(directory: ProcessEnvironment.absolute(outputDirectory))
            } catch {
                StandardError.write("sdfetch: \(Escaping.terminal(error.detail))\n")
                return ExitStatus(error)
            }
        }
        let terminal = Terminal(environment: environment, progress: progress, quiet: isQuiet)
        let console = Console(environment: environment)
        var options = options
        options.concurrency = DescriptorLimit.cap(options.concurrency) { console.error($0) }
        let fetcher = Fetcher(options: options, cache: cache, notes: isVerbose ? VerboseNotes.printer(console) : nil)
        let reader = URLListReader(sources: sources)
        let fetchRun = FetchRun(fetcher: fetcher, sources: sources, shard: shard)
        let trap = SignalTrap {
            reader.cancel()
            fetcher.cancelAll()
            console.error("sdfetch: interrupted, finishing (press Ctrl-C again to quit at once)\n")
        }
        let started = ContinuousClock.now
        let ticker = ProgressTicker.start(
            progress: fetchRun.progress, console: console, terminal: terminal, environment: environment, started: started)

        let events = AsyncChannel<FetchEvent>()
        let producer = Task { await fetchRun.run(reader: reader, into: events) }
        var consumer = EventConsumer(console: console, terminal: terminal, placer: placer, isJSON: isJSON)
        for await event in events { consumer.handle(event) }
        await producer.value
        ticker.cancel()
        await ticker.value
        console.removeBar()
        console.flush()
        fetcher.shutdown()
        trap.remove()

        let interrupted = trap.wasInterrupted
        if !isQuiet {
            console.error(
                RunReport.summary(consumer.summary, elapsed: ContinuousClock.now - started, interrupted: interrupted, terminal: terminal))
        }
        if !interrupted {
            CacheLimit.enforce(on: cache, maxBytes: options.maxCacheSize, protecting: consumer.summary.usedKeys, console: console)
        }
        return ExitStatus(run: consumer.summary, interrupted: interrupted)
    }
}

/// `--max-cache-size`: trims the cache after a fetch run, keeping this run's entries to last.
enum CacheLimit {
    static func enforce(on cache: DiskCache, maxBytes: Int64, protecting keys: Set<KeyDigest>, console: Console) {
        do throws(CacheError) {
            _ = try cache.enforceLimit(maxBytes: maxBytes, protecting: keys, listing: false)
        } catch {
            console.error("sdfetch: cannot trim the cache to \(HumanReadable.bytes(maxBytes)): \(Escaping.terminal(error.description))\n")
        }
    }
}
