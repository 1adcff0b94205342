import AsyncAlgorithms
import Synchronization

/// A whole batch: read inputs, de-duplicate, fetch, report (the CLI's main job).
///
/// Each key is fetched once per run however often it appears; later occurrences raise the
/// key's `duplicates` and the summary's total. A result carries the count known when it is
/// reported; ``FetchEvent/inputFinished(duplicates:)`` gives every key's final count, so a
/// consumer that needs it exact whatever the timing (JSON) can wait for it.
/// At most a few times `concurrency` URLs are in flight, so the reader waits when the
/// fetcher is full and a list of any length runs in bounded memory (the seen-set holds
/// one 16-byte digest per unique key; it is handed to the summary as ``RunSummary/usedKeys``
/// at the end). Fresh cache hits are served inline by the reading loop itself.
public struct FetchRun: Sendable {
    public let fetcher: Fetcher
    public let sources: [InputSource]
    /// Only keys in this shard are processed (`--shard K/N`).
    public var shard: Shard?
    public let progress = RunProgress()
    /// Results per hand-off when nothing waits (a warm run): large enough to make the
    /// consumer's wake-up rare, small enough that output still streams.
    static let resultBatch = 256

    public init(fetcher: Fetcher, sources: [InputSource], shard: Shard? = nil) {
        self.fetcher = fetcher
        self.sources = sources
        self.shard = shard
    }

    /// Runs the batch, sending every event into `events` and finishing it.
    ///
    /// `reader` is made by the caller so a signal handler can cancel it.
    public func run(reader: URLListReader, into events: AsyncChannel<FetchEvent>) async {

        var summary = RunSummary()
        var seen = Set<KeyDigest>()
        // Further occurrences per key met more than once: grows with duplicated keys only.
        var duplicateCounts: [KeyDigest: Int] = [:]
        let limit = max(16, fetcher.options.concurrency * 4)

        var done: [FetchResult] = []
        // Fetches that have finished, so the loop collects them without blocking before it
        // waits for more input (a slow producer must not hold finished results back).
        let finishedFetches = FinishedCount()
        var collected = 0
        var isTotalExpected = false

        func report(_ result: FetchResult) {
            var result = result
            if let digest = result.key?.digest {
                result.duplicates = duplicateCounts[digest] ?? 0
            }
            if result.failure?.kind == .interrupted {
                summary.wasInterrupted = true
                summary.interrupted += 1
            } else {
                summary.counts[result.status, default: 0] += 1
            }
            if result.status == .downloaded { summary.downloadedBytes += result.bytes }
            progress.completed(result)
            done.append(result)
        }

        /// Hands finished results to the consumer; called before every wait and when a batch is full.
        func flush() async {
            guard !done.isEmpty else { return }
            let batch = done
            done.removeAll(keepingCapacity: true)
            await events.send(.results(batch))
        }

        await withTaskGroup(of: FetchResult.self) { group in
            var running = 0
            while true {
                while collected < finishedFetches.value.load(ordering: .acquiring), let finished = await group.next() {
                    running -= 1
                    collected += 1
                    report(finished)
                }
                await flush()
                guard let batch = await reader.next() else { break }
                if !isTotalExpected, let lines = reader.expectedLines {
                    isTotalExpected = true
                    progress.expect(lines: lines)
                }
                // After Ctrl-C, lines already read are not started.
                for item in batch where !reader.isCancelled {
                    if done.count >= Self.resultBatch { await flush() }
                    switch item {
                    case .unreadable(let source, let detail):
                        summary.unreadableInputs += 1
                        await flush()
                        await events.send(.unreadableInput(source: source, detail: detail))
                    case .line(let line):
                        let key: URLKey
                        do throws(InvalidURL) {
                            guard !line.isOverlong else { throw InvalidURL(reason: "longer than \(URLKey.maxLength) bytes") }
                            key = try URLKey(parsing: line.text)
                        } catch {
                            progress.discovered()
                            report(
                                FetchResult(
                                    url: line.text, key: nil, status: .invalid,
                                    failure: FetchFailure(.invalidURL, error.reason),
                                    source: "\(line.source):\(line.number)"))
                            continue
                        }
                        if let shard, !shard.contains(key.digest) {
                            progress.settledWithoutResult()
                            continue
                        }
                        guard seen.insert(key.digest).inserted else {
                            progress.settledWithoutResult()
                            summary.duplicates += 1
                            duplicateCounts[key.digest, default: 0] += 1
                            continue
                        }
                        progress.discovered()
                        // Warm path: a servable cache entry is answered inline, without a
                        // task, an actor hop or a slot (SPEC: >= 50,000 URLs/s warm).
                        let started = ContinuousClock.now
                        if var hit = fetcher.cachedHit(key, spelling: line.text) {
                            hit.duration = ContinuousClock.now - started
                            report(hit)
                            continue
                        }
                        if running >= limit {
                            await flush()
                            if let finished = await group.next() {
                                running -= 1
                                collected += 1
                                report(finished)
                            }
                        }
                        let fetcher = self.fetcher
                        let spelling = line.text
                        group.addTask {
                            let result = await fetcher.fetch(key, spelling: spelling)
                            finishedFetches.value.add(1, ordering: .releasing)
                            reader.wake()
                            return result
                        }
                        running += 1
                    }
                }
            }
            progress.inputDidFinish()
            await flush()
            await events.send(.inputFinished(duplicates: duplicateCounts))
            while true {
                await flush()
                guard let finished = await group.next() else { break }
                report(finished)
            }
        }
        summary.usedKeys = seen
        await events.send(.finished(summary))
        events.finish()
    }
}

/// How many fetch tasks of a run have returned; shared with the tasks, hence a class.
private final class FinishedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Shard K of N by key hash (`--shard K/N`, 0-based), so N jobs split one list exactly.
public struct Shard: Sendable, Equatable {
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count > 0, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    public func contains(_ digest: KeyDigest) -> Bool {
        Int(digest.high % UInt64(count)) == index
    }
}
