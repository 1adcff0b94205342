import AsyncAlgorithms
import Synchronization

/// The first stage of a ``FetchRun``: read, identify and de-duplicate, look up, start the
/// network steps, collect, hand on. Each step is one method below; the loop in ``run(_:)``
/// only orders them.
///
/// Owned by the run's task and never shared (the task group's children only return
/// results). Back-pressure: at most `limit` network fetches run at once; the reader waits
/// for a slot. Results go to `output` in batches (``FetchRun/resultBatch``), and always
/// before the loop waits, so a slow producer never holds finished results back.
struct RunIntake {
    let fetcher: Fetcher
    let shard: Shard?
    let progress: RunProgress
    let reader: URLListReader
    let output: AsyncChannel<FetchEvent>
    /// Network fetches in flight at most.
    let limit: Int

    /// Inputs, duplicates and keys; the status counts are ``RunTally``'s.
    private var summary = RunSummary()
    private var seen = Set<KeyDigest>()
    /// Further occurrences per key met more than once: grows with duplicated keys only.
    private var duplicateCounts: [KeyDigest: Int] = [:]
    /// Results waiting for the next hand-off.
    private var done: [FetchResult] = []
    private var running = 0
    /// Fetches that returned, counted by the children, so the loop collects them without
    /// waiting before it asks the reader for more.
    private let finished = FinishedCount()
    private var collected = 0
    private var isTotalExpected = false

    init(
        fetcher: Fetcher, shard: Shard?, progress: RunProgress, reader: URLListReader,
        output: AsyncChannel<FetchEvent>, limit: Int
    ) {
        self.fetcher = fetcher
        self.shard = shard
        self.progress = progress
        self.reader = reader
        self.output = output
        self.limit = limit
    }

    mutating func run(_ group: inout TaskGroup<FetchResult>) async {
        while true {
            await collectFinished(&group)
            await flush()
            guard let batch = await reader.next() else { break }
            noteExpectedTotal()
            // After Ctrl-C, lines already read are not started.
            for item in batch where !reader.isCancelled {
                if done.count >= FetchRun.resultBatch { await flush() }
                await take(item, &group)
            }
        }
        progress.inputDidFinish()
        await flush()
        await output.send(.inputFinished(duplicates: duplicateCounts))
        while let result = await group.next() {
            report(result)
            await flush()
        }
        summary.usedKeys = seen
        await output.send(.finished(summary))
    }

    // MARK: - Steps

    /// One input item: an unreadable source, or a line on its way.
    private mutating func take(_ item: InputItem, _ group: inout TaskGroup<FetchResult>) async {
        switch item {
        case .unreadable(let source, let detail):
            summary.unreadableInputs += 1
            await flush()
            await output.send(.unreadableInput(source: source, detail: detail))
        case .line(let line):
            guard let key = identify(line) else { return }
            // Warm path: the lookup answers inline, without a task, an actor hop or a slot
            // (SPEC: >= 50,000 URLs/s warm).
            let started = ContinuousClock.now
            switch fetcher.probe(key, spelling: line.text) {
            case .answered(var hit):
                hit.duration = ContinuousClock.now - started
                report(hit)
            case .needsNetwork(let stale):
                await startNetwork(key, spelling: line.text, after: stale, &group)
            }
        }
    }

    /// Identify and de-duplicate: the line's key when it starts a fetch; nil when the line
    /// ends here (invalid: reported; outside the shard or a repeat: counted).
    private mutating func identify(_ line: InputLine) -> URLKey? {
        let key: URLKey
        do throws(InvalidURL) {
            guard !line.isOverlong else { throw InvalidURL(reason: "longer than \(URLKey.maxLength) bytes") }
            key = try URLKey(parsing: line.text)
        } catch {
            progress.discovered()
            report(
                FetchResult(
                    url: line.text, key: nil, status: .invalid, failure: FetchFailure(.invalidURL, error.reason),
                    source: "\(line.source):\(line.number)"))
            return nil
        }
        if let shard, !shard.contains(key.digest) {
            progress.settledWithoutResult()
            return nil
        }
        guard seen.insert(key.digest).inserted else {
            progress.settledWithoutResult()
            summary.duplicates += 1
            duplicateCounts[key.digest, default: 0] += 1
            return nil
        }
        progress.discovered()
        return key
    }

    /// The network steps of `key` as a child task, once a slot is free.
    private mutating func startNetwork(
        _ key: URLKey, spelling: String, after stale: CacheEntry?, _ group: inout TaskGroup<FetchResult>
    ) async {
        if running >= limit {
            await flush()
            if let result = await group.next() {
                running -= 1
                collected += 1
                report(result)
            }
        }
        let (fetcher, finished, reader) = (self.fetcher, self.finished, self.reader)
        group.addTask {
            let result = await fetcher.fetch(key, spelling: spelling, after: stale)
            finished.value.add(1, ordering: .releasing)
            reader.wake()
            return result
        }
        running += 1
    }

    /// Takes the results of fetches known to have returned (so `next()` does not wait).
    private mutating func collectFinished(_ group: inout TaskGroup<FetchResult>) async {
        while collected < finished.value.load(ordering: .acquiring), let result = await group.next() {
            running -= 1
            collected += 1
            report(result)
        }
    }

    /// Queues `result` for the next hand-off with its key's duplicates so far.
    private mutating func report(_ result: FetchResult) {
        var result = result
        if let digest = result.key?.digest { result.duplicates = duplicateCounts[digest] ?? 0 }
        done.append(result)
    }

    /// Hands the queued results on; called before every wait and when a batch is full.
    private mutating func flush() async {
        guard !done.isEmpty else { return }
        let batch = done
        done.removeAll(keepingCapacity: true)
        await output.send(.results(batch))
    }

    private mutating func noteExpectedTotal() {
        if !isTotalExpected, let lines = reader.expectedLines {
            isTotalExpected = true
            progress.expect(lines: lines)
        }
    }
}

/// How many fetch tasks of a run have returned; shared with the tasks, hence a class.
private final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}
