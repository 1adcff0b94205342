import FoundationEssentials
import Glibc

/// Streams input lines from files, stdin and in-memory lists, in order, on a thread of its
/// own (an `AsyncSequence` of URLs: on a task, ``init(urls:name:)``).
///
/// Reading blocks (a pipe may be slow), so it never runs on the cooperative pool. Lines
/// travel in batches through a small bounded queue: when the consumer falls behind the
/// reader thread waits, which keeps memory bounded on lists of any length. A batch is
/// handed on when it is full or when the input has nothing more to read right now, so a
/// slow producer's first line is fetched before it writes the second
/// (<doc:Fetching#Input>), while a fast one still fills whole batches.
public final class URLListReader: @unchecked Sendable {
    /// Guards `batches`, `finished`, `cancelled`, `counted`, `waiter` and `roomWaiter`.
    private let condition = ConditionLock()
    private var batches: [[InputItem]] = []
    private var finished = false
    private var cancelled = false
    private var counted: Int?
    private var waiter: CheckedContinuation<[InputItem]?, Never>?
    /// An asynchronous producer (``init(urls:name:)``) waiting for room in `batches`.
    private var roomWaiter: CheckedContinuation<Void, Never>?

    private static let batchLines = 512
    private static let queuedBatches = 8
    private static let chunkBytes = 64 * 1024

    /// What ``init(sources:options:standardInput:)`` reads, for ``reread()``.
    private let input: (sources: [InputSource], options: InputOptions)?
    /// The descriptors of `input`'s regular files, opened once as the reader starts (nil for
    /// any other source): both reads go through them, so another file or a FIFO put at a
    /// list's name after the start is not what either reads.
    private let held: HeldFiles
    /// The reader whose descriptors a second read goes through, kept open by it.
    private let first: URLListReader?

    /// Starts reading `sources` at once, each in the format `options` gives it.
    /// `standardInput` is the file descriptor read for `-`.
    public convenience init(
        sources: [InputSource], options: InputOptions = InputOptions(), standardInput: Int32 = STDIN_FILENO
    ) {
        self.init(sources: sources, options: options, standardInput: standardInput, counts: true)
    }

    /// `counts`: whether ``expectedLines`` is counted. `first`: the reader a second read
    /// goes through (``reread()``), nil for a first one.
    private init(
        sources: [InputSource], options: InputOptions, standardInput: Int32, counts: Bool, first: URLListReader? = nil
    ) {
        input = (sources, options)
        held = first?.held ?? HeldFiles(sources)
        self.first = first
        DedicatedThread.start(name: "sdfetch-input") { [self] in
            read(sources, options: options, standardInput: standardInput, counts: counts)
        }
    }

    /// A second reader of the same input from its start, which counts nothing: for a scout
    /// that reads on while the run waits (``HostScout``). Nil when a source cannot be read
    /// twice: standard input, a file that is a pipe or a device (`<(command)`,
    /// `/dev/stdin`), an asynchronous sequence.
    func reread() -> URLListReader? {
        guard let input, first == nil, held.coversFiles(of: input.sources),
            !input.sources.contains(where: { if case .standardInput = $0 { true } else { false } })
        else { return nil }
        return URLListReader(
            sources: input.sources, options: input.options, standardInput: -1, counts: false, first: self)
    }

    /// Reads URLs from `urls` as it yields them, one element a line (as
    /// ``InputSource/list(name:_:)`` reads an array), reported as `name:N`: for a list that
    /// arrives while the run goes on (a crawler's output, a queue). The sequence is iterated
    /// on a task of its own, which waits while the run is full; an error it throws ends the
    /// input and is reported as an unreadable source. The total is unknown until it ends.
    public init<URLs: AsyncSequence & Sendable>(urls: URLs, name: String) where URLs.Element == String {
        input = nil
        held = HeldFiles([])
        first = nil
        Task { [self] in
            var batch: [InputItem] = []
            var number = 0
            do {
                for try await element in urls {
                    number += 1
                    guard !isCancelled else { break }
                    guard let item = LineSplitter.line(element, source: name, number: number) else { continue }
                    batch.append(item)
                    // At once when nothing waits to be taken, else in full batches.
                    if batch.count >= Self.batchLines || isQueueEmpty {
                        guard await pushWhenRoom(batch) else { break }
                        batch = []
                    }
                }
            } catch {
                batch.append(.unreadable(source: name, detail: String(describing: error)))
            }
            if !batch.isEmpty { _ = await pushWhenRoom(batch) }
            finish()
        }
    }

    /// The next batch, or nil once every source is read.
    public func next() async -> [InputItem]? {
        await withCheckedContinuation { continuation in
            condition.lock()
            if !batches.isEmpty {
                let batch = batches.removeFirst()
                condition.broadcast()
                let room = takeRoomWaiter()
                condition.unlock()
                room?.resume()
                continuation.resume(returning: batch)
            } else if finished || cancelled {
                condition.unlock()
                continuation.resume(returning: nil)
            } else {
                waiter = continuation
                condition.unlock()
            }
        }
    }

    /// Meaningful lines (rows, for tables) of the whole input, when every source is a regular
    /// file; known before the first batch is handed out for plain lists, and once counted
    /// for tables and gzipped lists, whose count runs beside the read. Nil for pipes and
    /// terminals (their total is learnt by reading them).
    public var expectedLines: Int? {
        condition.lock()
        defer { condition.unlock() }
        return counted
    }

    /// Stops reading; the thread ends at its next chunk (or when a blocked read returns).
    public func cancel() {
        condition.lock()
        cancelled = true
        let pending = waiter
        waiter = nil
        let room = takeRoomWaiter()
        condition.broadcast()
        condition.unlock()
        pending?.resume(returning: nil)
        room?.resume()
    }

    // MARK: - Reader thread

    /// Sums ``LineCounter`` (``RowCounter`` for tables) over `sources`, nil as soon as one is
    /// not a regular file.
    private func countLines(_ sources: [InputSource], options: InputOptions, standardInput: Int32) -> Int? {
        var total = 0
        for (index, source) in sources.enumerated() {
            let lines: Int?
            let format = options.format(of: source)
            switch source {
            case .list(let name, let elements):
                lines = elements.indices.count { LineSplitter.line(elements[$0], source: name, number: $0 + 1) != nil }
            case .standardInput where format.isTabular:
                lines = RowCounter.rows(ofDescriptor: standardInput, format: format)
            case .standardInput:
                lines = LineCounter.meaningfulLines(ofDescriptor: standardInput)
            case .file(let path) where access(path, R_OK) != 0:
                lines = 0  // an unreadable file contributes nothing; the read below reports it
            case .file(let path) where format.isTabular || options.isGzipped(source):
                lines = RowCounter.rows(ofFile: path, format: format, isGzipped: options.isGzipped(source))
            case .file(let path):
                // Counted before the read, so the held descriptor is still at its start.
                lines =
                    held.descriptor(of: index).map(LineCounter.meaningfulLines(ofDescriptor:))
                    ?? LineCounter.meaningfulLines(ofFile: path)
            }
            guard let lines else { return nil }
            total += lines
        }
        return total
    }

    private func read(_ sources: [InputSource], options: InputOptions, standardInput: Int32, counts: Bool) {
        let count: @Sendable () -> Void = { [self] in
            let expected = countLines(sources, options: options, standardInput: standardInput)
            condition.lock()
            counted = expected
            condition.unlock()
        }
        // A table's rows are counted by its parser (a quarter of a second per million rows,
        // gzipped lists inflated too): on a thread of its own, so the first row is fetched
        // at once. Plain lines are counted at memory speed, before the read.
        // A second read (``reread()``) counts nothing.
        if counts, sources.contains(where: { options.format(of: $0).isTabular || options.isGzipped($0) }) {
            DedicatedThread.start(name: "sdfetch-count", count)
        } else if counts {
            count()
        }
        var batch: [InputItem] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 1)
        defer { buffer.deallocate() }
        for (index, source) in sources.enumerated() {
            if case .list(let name, let elements) = source {
                for (index, element) in elements.enumerated() {
                    guard let item = LineSplitter.line(element, source: name, number: index + 1) else { continue }
                    batch.append(item)
                    if batch.count >= Self.batchLines {
                        guard push(batch) else { break }
                        batch = []
                    }
                }
                if isCancelled { break }
                continue
            }
            let fd: Int32
            // A second read preads from the start, leaving the first read's offset alone.
            let start: off_t? = first == nil ? nil : 0
            switch source {
            case .list: preconditionFailure("read above")
            case .standardInput: fd = standardInput
            case .file where held.descriptor(of: index) != nil: fd = held.descriptor(of: index)!
            case .file(let path):
                fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd < 0 {
                    batch.append(.unreadable(source: path, detail: errnoText()))
                    continue
                }
            }
            var splitter = InputSplitter(source: source.name, format: options.format(of: source), options: options)
            var bytes = SourceBytes(DescriptorReader(fd: fd, from: start), isGzipped: options.isGzipped(source))
            var failure: String?
            while !splitter.hasFailed {
                let count: Int
                do throws(InputReadError) {
                    count = try bytes.read(into: buffer)
                } catch {
                    failure = error.detail
                    break
                }
                if count == 0 { break }
                splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]), into: &batch)
                if batch.count >= Self.batchLines || (!batch.isEmpty && !Self.hasDataReady(fd)) {
                    guard push(batch) else { break }
                    batch = []
                }
            }
            bytes.end()
            // A read that failed (a gzip cut short, an I/O error) leaves its last line cut off
            // too: it is not a line the list holds, so it is dropped, not fetched.
            if let failure {
                batch.append(.unreadable(source: source.name, detail: failure))
            } else {
                splitter.finish(into: &batch)
            }
            if case .file = source, held.descriptor(of: index) == nil { close(fd) }
            if isCancelled { break }
        }
        if !batch.isEmpty { _ = push(batch) }
        finish()
    }

    /// Every source is read: a waiting consumer gets nil.
    private func finish() {
        condition.lock()
        finished = true
        let pending = waiter
        waiter = nil
        condition.unlock()
        pending?.resume(returning: nil)
    }

    /// Whether a read of `fd` would return at once. A regular file always would; a pipe or
    /// terminal whose writer has paused would block, so lines read so far go out first.
    private static func hasDataReady(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Whether ``cancel()`` was called: lines already handed out should not be started.
    public var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Whether no batch waits to be taken: the consumer waits, or soon will.
    private var isQueueEmpty: Bool {
        condition.lock()
        defer { condition.unlock() }
        return batches.isEmpty
    }

    /// ``push(_:)`` for an asynchronous producer: suspends, rather than blocks a thread,
    /// while the queue is full; ``next()`` resumes it when it takes a batch.
    private func pushWhenRoom(_ batch: [InputItem]) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if batches.count < Self.queuedBatches || cancelled {
                condition.unlock()
                continuation.resume()
            } else {
                roomWaiter = continuation
                condition.unlock()
            }
        }
        return push(batch)  // one producer: the room it waited for is still there
    }

    /// The asynchronous producer waiting for room, resumed (outside the lock) by whoever
    /// makes some.
    private func takeRoomWaiter() -> CheckedContinuation<Void, Never>? {
        let pending = roomWaiter
        roomWaiter = nil
        return pending
    }

    /// Hands a batch to the consumer, waiting while the queue is full. False once cancelled.
    private func push(_ batch: [InputItem]) -> Bool {
        condition.lock()
        while batches.count >= Self.queuedBatches && !cancelled { condition.wait() }
        guard !cancelled else {
            condition.unlock()
            return false
        }
        if let pending = waiter {
            waiter = nil
            condition.unlock()
            pending.resume(returning: batch)
        } else {
            batches.append(batch)
            condition.unlock()
        }
        return true
    }
}
