import AsyncAlgorithms

/// A whole batch: read inputs, de-duplicate, fetch, report (the CLI's main job).
///
/// Each key is fetched once per run however often it appears; later occurrences only
/// raise the first one's `duplicates` while it is in flight, and the summary's total.
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
        var pendingDuplicates: [KeyDigest: Int] = [:]
        let limit = max(16, fetcher.options.concurrency * 4)

        var done: [FetchResult] = []

        func report(_ result: FetchResult) {
            var result = result
            if let digest = result.key?.digest {
                result.duplicates = pendingDuplicates.removeValue(forKey: digest) ?? 0
            }
            summary.counts[result.status, default: 0] += 1
            if result.status == .downloaded { summary.downloadedBytes += result.bytes }
            if result.failure?.kind == .interrupted { summary.wasInterrupted = true }
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
                await flush()
                guard let batch = await reader.next() else { break }
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
                        if let shard, !shard.contains(key.digest) { continue }
                        guard seen.insert(key.digest).inserted else {
                            summary.duplicates += 1
                            if pendingDuplicates[key.digest] != nil { pendingDuplicates[key.digest]! += 1 }
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
                        pendingDuplicates[key.digest] = 0
                        if running >= limit {
                            await flush()
                            if let finished = await group.next() {
                                running -= 1
                                report(finished)
                            }
                        }
                        let fetcher = self.fetcher
                        let spelling = line.text
                        group.addTask { await fetcher.fetch(key, spelling: spelling) }
                        running += 1
                    }
                }
            }
            progress.inputDidFinish()
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
