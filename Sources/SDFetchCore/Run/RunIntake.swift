/// The run's input side: read, identify and de-duplicate, look up, queue what needs the
/// network. Each step is one method below; the loop in ``run()`` only orders them.
///
/// Owned by the run's intake task and never shared. It publishes warm hits itself, a batch
/// at a time; the lines that need the network go to a ``NetworkQueue`` of at most
/// ``lookAhead`` lines, which a ``NetworkStarter`` task empties as network slots (at most
/// `limit` fetches at once) free up, each fetch publishing its own result (``RunLedger``).
/// Flow control is two waits, both before work is taken on: for room in the ledger before
/// each input batch (a slow consumer holds the input back), and for room in the queue (the
/// network holds the input back, that many lines later).
struct RunIntake {
    let fetcher: Fetcher
    let shard: Shard?
    let progress: RunProgress
    let reader: URLListReader
    let ledger: RunLedger
    /// Each result's last step, run where the result is made: a warm hit's in its lookup's
    /// slice (see ``RunIntake/take(_:)``), a fetched one's in its child task; nil: none.
    let delivery: (any ResultDelivery)?
    /// Network fetches in flight at most.
    let limit: Int

    /// Every key met in the run: the one coalescing point (each reaches the cache once).
    private var seen = KeyDigestSet()
    /// The pins of keys whose first row pinned its bytes, by their first 8 bytes (a later
    /// row pinning another hash is told apart with odds of 2^-64 against): grows with
    /// pinned keys only.
    private var pins: [KeyDigest: UInt64] = [:]
    private var isTotalExpected = false
    /// Lines queued for the network ahead of their turn, at most: a new host's name lookup
    /// and connection start when its first URL is queued, so a dead host's timeout
    /// overlaps the transfers before it (<doc:Fetching#Retries-and-timeouts>). About 2 KB a line
    /// in memory (a cold run of 200,000 URLs: 74 MB at most without it, 84 with 4,096).
    static let lookAhead = 2048
    /// A line that waits for a slot has its host probed at once; one the starter takes at
    /// once goes straight to its request.
    private let queue: NetworkQueue<NetworkLine>
    /// Reads on past the queue for host names while the network is full; nil `--offline`.
    private let scout: HostScout?

    init(
        fetcher: Fetcher, shard: Shard?, reader: URLListReader, ledger: RunLedger, delivery: (any ResultDelivery)?,
        limit: Int
    ) {
        self.fetcher = fetcher
        self.shard = shard
        self.progress = ledger.progress
        self.reader = reader
        self.ledger = ledger
        self.delivery = delivery
        self.limit = limit
        queue = NetworkQueue(capacity: Self.lookAhead) { [fetcher] line in fetcher.expectNetwork(line.line.key) }
        scout = fetcher.options.offline ? nil : HostScout()
    }

    /// Runs `intake` on the calling task (the run's child task for its input side).
    static func run(_ intake: RunIntake) async {
        var intake = intake
        await intake.run()
    }

    /// Reads the input to its end, then waits for the network steps it started; the ledger
    /// then holds every result, and gets the seen-set as the summary's used keys.
    mutating func run() async {
        let starter = NetworkStarter(fetcher: fetcher, reader: reader, ledger: ledger, delivery: delivery, limit: limit)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [queue] in await starter.run(queue) }
            if let scout {
                group.addTask { [reader, queue, fetcher, shard] in
                    await scout.run(rereading: reader, queue: queue, fetcher: fetcher, shard: shard)
                }
            }
            while let batch = await reader.next() {
                scout?.intakeDidTake(batch.count)
                noteExpectedTotal()
                // After Ctrl-C, lines already read are not started.
                guard !reader.isCancelled else { continue }
                await ledger.waitForRoom()
                await take(batch)
            }
            ledger.inputDidFinish()
            queue.finish()
            await group.waitForAll()
        }
        ledger.finish(usedKeys: seen)
    }

    // MARK: - Steps

    /// One batch of input: each line parsed and hashed, then de-duplicated in order, then
    /// looked up; hits are published at once, the rest go to the network in order. Parsing
    /// and lookups are per-line work, split over the cores (``BatchSplit``); the steps that
    /// count or decide stay on this task.
    private mutating func take(_ batch: [InputItem]) async {
        let filter = fetcher.options.keyQueryFilter
        let parsed = await BatchSplit.map(batch) { (item: InputItem) -> ParsedLine? in
            guard case .line(let line) = item else { return nil }
            return ParsedLine(line, filter: filter)
        }
        var unique: [UniqueLine] = []
        unique.reserveCapacity(batch.count)
        var invalid: [FetchResult] = []
        var repeats: [KeyDigest] = []
        var repeatedRows: [RepeatedRow] = []
        for (item, line) in zip(batch, parsed) {
            switch item {
            case .unreadable(let source, let detail):
                ledger.publish(invalid)
                invalid.removeAll()
                ledger.unreadable(source: source, detail: detail)
            case .line(let input):
                let repeated = repeats.count
                guard let line, let key = identify(input, line.key, invalid: &invalid, repeats: &repeats) else {
                    if repeats.count > repeated, let fields = input.fields, let digest = repeats.last {
                        repeatedRows.append(RepeatedRow(digest: digest, source: input.place, fields: fields))
                    }
                    continue
                }
                unique.append(UniqueLine(key: key, line: input))
            }
        }
        ledger.noteDuplicates(repeats, rows: repeatedRows)
        ledger.publish(invalid)
        // Warm path: a lookup answers inline, without a task per URL or a slot
        // (the bench's warm target, >= 100,000 URLs/s).
        // A hit's delivery (`-o`) runs right after its lookup, in the same slice.
        let (fetcher, delivery) = (self.fetcher, self.delivery)
        let probes = await BatchSplit.map(unique) { unique in
            let started = ContinuousClock.now
            var probe = fetcher.probe(unique.key, spelling: unique.line.text, pin: unique.line.pin)
            let duration = ContinuousClock.now - started
            if case .answered(var hit) = probe {
                await delivery?.deliver(&hit)
                // A maintenance command removed the entry after the lookup: fetched again.
                if hit.entryWasRemoved { return Fetcher.Probe.needsNetwork(stale: nil) }
                // Delivered: the held file (a pinned hit's) is closed here, not with the batch.
                hit.heldImage = nil
                hit.duration = duration
                unique.line.mark(&hit)
                probe = .answered(hit)
            }
            return probe
        }
        progress.lookedUp(unique.count)
        var hits: [FetchResult] = []
        for (unique, probe) in zip(unique, probes) {
            switch probe {
            case .answered(let hit):
                hits.append(hit)
            case .needsNetwork(let stale):
                guard !reader.isCancelled else { continue }
                ledger.publish(hits)
                hits.removeAll()
                await queue.push(NetworkLine(line: unique, stale: stale))
            }
        }
        ledger.publish(hits)
    }

    /// Identify and de-duplicate: the line's key when it starts a fetch; nil when the line
    /// ends here (invalid: a result in `invalid`, under `--shard` from shard 0 only;
    /// outside the shard: settled; a repeat: its key in `repeats`).
    private mutating func identify(
        _ line: InputLine, _ parsed: Result<URLKey, InvalidURL>, invalid: inout [FetchResult],
        repeats: inout [KeyDigest]
    ) -> URLKey? {
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
            // A row the table got wrong names the row's fault: its URL may be fine.
            let kind: FetchFailure.Kind = line.problem == nil ? .invalidURL : .invalidRow
            var result = FetchResult(
                url: line.text, key: nil, status: .invalid, failure: FetchFailure(kind, error.reason),
                source: line.place)
            result.fields = line.fields
            invalid.append(result)
            return nil
        }
        if let shard, !shard.contains(key.digest) {
            progress.settledWithoutResult()
            return nil
        }
        let pin = line.pin.map(Self.pinPrefix)
        guard seen.insert(key.digest) else {
            if let pin, pins[key.digest] != pin {
                // One fetch cannot meet two pins: the later row is the list's mistake.
                progress.discovered()
                var result = FetchResult(
                    url: line.text, key: nil, status: .invalid,
                    failure: FetchFailure(.invalidRow, "pins another sha256 than an earlier row of this URL"),
                    source: line.place)
                result.fields = line.fields
                invalid.append(result)
                return nil
            }
            progress.settledWithoutResult()
            repeats.append(key.digest)
            return nil
        }
        if let pin { pins[key.digest] = pin }
        progress.discovered()
        return key
    }

    /// The first 8 bytes of a pin's 64 hex digits.
    private static func pinPrefix(_ pin: String) -> UInt64 {
        UInt64(pin.prefix(16), radix: 16) ?? 0
    }

    private mutating func noteExpectedTotal() {
        if !isTotalExpected, let lines = reader.expectedLines {
            isTotalExpected = true
            progress.expect(lines: lines)
        }
    }
}

/// The first line of a key: what its fetch needs (the spelling, a row's pin) and what its
/// result carries (a row's place and columns).
struct UniqueLine: Sendable {
    let key: URLKey
    let line: InputLine
}

extension InputLine {
    /// `FILE:LINE`.
    var place: String { "\(source):\(number)" }

    /// Gives a row's result its place and columns; a plain line's result stays as it is.
    func mark(_ result: inout FetchResult) {
        guard let fields else { return }
        result.source = place
        result.fields = fields
    }
}

/// A line's key or why it has none: the per-line part of identifying, free of the run's state.
private struct ParsedLine: Sendable {
    let key: Result<URLKey, InvalidURL>

    init(_ line: InputLine, filter: KeyQueryFilter) {
        key = Result { () throws(InvalidURL) in
            if let problem = line.problem { throw InvalidURL(reason: problem) }
            guard !line.isOverlong else { throw InvalidURL(reason: "longer than \(URLKey.maxLength) bytes") }
            return filter.apply(to: try URLKey(parsing: line.text))
        }
    }
}
