import AsyncAlgorithms
import Synchronization

/// The first stage of a ``FetchRun``: read, identify and de-duplicate, look up, start the
/// network steps, deliver, collect, hand on. Each step is one method below; the loop in ``run(_:)``
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
    /// Each result's last step, run where the result is made: a warm hit's in its lookup's
    /// slice (see ``take(_:_:)``), a fetched one's in its child task; nil: none.
    let delivery: (any ResultDelivery)?
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
        output: AsyncChannel<FetchEvent>, delivery: (any ResultDelivery)?, limit: Int
    ) {
        self.fetcher = fetcher
        self.shard = shard
        self.progress = progress
        self.reader = reader
        self.output = output
        self.delivery = delivery
        self.limit = limit
    }

    mutating func run(_ group: inout TaskGroup<FetchResult>) async {
        while true {
            await collectFinished(&group)
            await flush()
            guard let batch = await reader.next() else { break }
            noteExpectedTotal()
            // After Ctrl-C, lines already read are not started.
            guard !reader.isCancelled else { continue }
            await take(batch, &group)
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

    /// One batch of input: each line parsed and hashed, then de-duplicated in order, then
    /// looked up; hits are answered at once, the rest go to the network in order. Parsing
    /// and lookups are per-line work, split over the cores (``BatchSplit``); the steps that
    /// count or decide stay on this task.
    private mutating func take(_ batch: [InputItem], _ group: inout TaskGroup<FetchResult>) async {
        let parsed = await BatchSplit.map(batch) { (item: InputItem) -> ParsedLine? in
            guard case .line(let line) = item else { return nil }
            return ParsedLine(line)
        }
        var unique: [(key: URLKey, spelling: String)] = []
        unique.reserveCapacity(batch.count)
        for (item, line) in zip(batch, parsed) {
            switch item {
            case .unreadable(let source, let detail):
                summary.unreadableInputs += 1
                await flush()
                await output.send(.unreadableInput(source: source, detail: detail))
            case .line(let input):
                if let line, let key = identify(input, line.key) { unique.append((key, input.text)) }
            }
        }
        // Warm path: a lookup answers inline, without a task per URL, an actor hop or a slot
        // (the bench's warm target, >= 100,000 URLs/s).
        // A hit's delivery (`-o`) runs right after its lookup, in the same slice.
        let (fetcher, delivery) = (self.fetcher, self.delivery)
        let probes = await BatchSplit.map(unique) { key, spelling in
            let started = ContinuousClock.now
            var probe = fetcher.probe(key, spelling: spelling)
            let duration = ContinuousClock.now - started
            if let delivery, case .answered(var hit) = probe {
                delivery.deliver(&hit)
                probe = .answered(hit)
            }
            return (probe, duration)
        }
        for ((key, spelling), (probe, duration)) in zip(unique, probes) {
            switch probe {
            case .answered(var hit):
                hit.duration = duration
                if done.count >= FetchRun.resultBatch { await flush() }
                report(hit)
            case .needsNetwork(let stale):
                guard !reader.isCancelled else { continue }
                await startNetwork(key, spelling: spelling, after: stale, &group)
            }
        }
    }

    /// Identify and de-duplicate: the line's key when it starts a fetch; nil when the line
    /// ends here (invalid: reported, under `--shard` by shard 0 only; outside the shard or a
    /// repeat: counted).
    private mutating func identify(_ line: InputLine, _ parsed: Result<URLKey, InvalidURL>) -> URLKey? {
        let key: URLKey
        switch parsed {
        case .success(let parsedKey):
            key = parsedKey
        case .failure(let error):
            if let shard, !shard.reportsKeylessLines {
                progress.settledWithoutResult()
                return nil
            }
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
        let (fetcher, delivery, finished, reader) = (self.fetcher, self.delivery, self.finished, self.reader)
        group.addTask {
            var result = await fetcher.fetch(key, spelling: spelling, after: stale)
            delivery?.deliver(&result)
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

/// A line's key or why it has none: the per-line part of identifying, free of the run's state.
private struct ParsedLine: Sendable {
    let key: Result<URLKey, InvalidURL>

    init(_ line: InputLine) {
        key = Result { () throws(InvalidURL) in
            if let problem = line.problem { throw InvalidURL(reason: problem) }
            guard !line.isOverlong else { throw InvalidURL(reason: "longer than \(URLKey.maxLength) bytes") }
            return try URLKey(parsing: line.text)
        }
    }
}

/// How many fetch tasks of a run have returned; shared with the tasks, hence a class.
private final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}
