import FoundationEssentials
import Glibc
import SDFetchCore
import Synchronization

/// Standard output and standard error of a fetch run, shared by the event consumer, the
/// ticker and `-v`'s notes; the writes themselves happen on one writer thread of its own.
///
/// Why a writer thread: a `write` to a pipe nobody reads (`sdfetch urls | less`) or to a
/// terminal (Ctrl-S) blocks, and on a task it would park a thread of the cooperative pool
/// (two here), with transfers, the bar and Ctrl-C's drain waiting behind it. Callers only
/// queue bytes (under a `Mutex` held for no system call) and the writer, a ``BlockingPool``
/// of one thread, writes them in the order they were queued, so result lines, messages and
/// the bar's redraws keep the order of the calls. When both streams are regular files
/// nothing can block, and the writes are made at once (``writesInline``). The queue is bounded: the consumer awaits ``waitForRoom()``
/// after each event, so a blocked stdout holds the run back instead of filling memory.
///
/// Standard output is buffered: one hand-over per 64 KiB when it is a file or pipe (a warm
/// run prints 50,000 lines a second), per line when it is a terminal or standard error
/// itself (`-o -`, where the bar is erased first), and whatever is pending at least every
/// ``flushInterval`` via ``flushIfStale()``. Standard error carries
/// the redrawn progress line: any other text first erases it and then draws it again, so
/// messages and results never land in the middle of the bar.
///
/// Lifetime: ``withConsole(environment:_:)``, which writes what is queued and joins the
/// writer on the way out.
final class Console: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var lastFlush = ContinuousClock.now
        /// The bar text on screen once the queued writes are done, or nil.
        var bar: String?
        /// Renders the bar afresh: what is drawn again below lines printed above it, so its
        /// counts include them (nil: the last line drawn).
        var redraw: (@Sendable () -> String)?
        /// Bytes and hand-overs queued for the writer and not yet written.
        var queuedBytes = 0
        var queuedHandOvers = 0
        /// ``waitForRoom()`` callers waiting for the queue to shrink.
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        /// After ``close()``: writes happen on the caller's thread (a late message).
        var isClosed = false
    }

    /// The writes of one call, in order; adjacent writes to one descriptor are joined.
    private struct Writes {
        var items: [(fd: Int32, bytes: [UInt8])] = []
        var byteCount = 0

        mutating func add<Bytes: Collection<UInt8>>(_ bytes: Bytes, to fd: Int32) {
            guard !bytes.isEmpty else { return }
            byteCount += bytes.count
            if let last = items.indices.last, items[last].fd == fd {
                items[last].bytes.append(contentsOf: bytes)
            } else {
                items.append((fd, Array(bytes)))
            }
        }

        func perform() {
            for item in items { FileDescriptorWriter.write(item.bytes, to: item.fd) }
        }
    }

    private let state = Mutex(State())
    private let writer = BlockingPool(threads: 1, name: "sdfetch-console")
    /// Where result lines and messages go: standard output and standard error, or a test's pipes.
    private let outputFD: Int32
    private let errorFD: Int32
    /// Both streams are regular files (whose writes meet only the page cache) or
    /// `/dev/null`: nothing can block, so the writes are made on the caller's thread, as a
    /// hand-over to the writer would cost more (a thread's wake-up per 64 KiB: 4% of a warm
    /// run's CPU).
    private let writesInline: Bool
    /// Result lines are written one by one: standard output is a terminal, or the results go
    /// to standard error (`-o -`), where they must keep their order with messages and the bar.
    private let flushesEachLine: Bool
    /// Whether erasing uses `ESC [ K`; without it (`TERM=dumb`) the line is blanked with spaces.
    private let canEraseLine: Bool
    /// Output written to the same terminal as the bar must erase the bar first.
    private let outputSharesBarTerminal: Bool

    static let flushInterval = Duration.milliseconds(250)
    private static let bufferLimit = 64 * 1024
    /// Queued bytes past which ``waitForRoom()`` waits: sixteen hand-overs of stdout.
    static let queueLimit = 16 * bufferLimit

    fileprivate init(environment: ProcessEnvironment, output: Int32, error: Int32) {
        outputFD = output
        errorFD = error
        writesInline = Self.cannotBlock(output) && Self.cannotBlock(error)
        // `-o -`: the results go to standard error, the bar's own stream.
        let sharesError = output == error
        flushesEachLine = sharesError || environment.isStandardOutputTerminal
        canEraseLine = !environment.isDumbTerminal
        outputSharesBarTerminal =
            sharesError || environment.isStandardOutputTerminal && environment.isStandardErrorTerminal
    }

    /// Queues a result line for standard output.
    func output(_ text: String) {
        change { state, writes in
            state.pending.append(contentsOf: text.utf8)
            if flushesEachLine || state.pending.count >= Self.bufferLimit {
                let bar = outputSharesBarTerminal ? state.bar : nil
                if bar != nil { erase(&state, &writes) }
                flush(&state, &writes)
                if let bar { draw(state.redraw?() ?? bar, &state, &writes) }
            }
        }
    }

    /// Queues a message line for standard error, keeping any bar below it.
    func error(_ text: String) {
        change { state, writes in
            let bar = state.bar
            if bar != nil { erase(&state, &writes) }
            writes.add(text.utf8, to: errorFD)
            if let bar { draw(state.redraw?() ?? bar, &state, &writes) }
        }
    }

    /// Writes a message from the signal path: never waits for the writer.
    ///
    /// A writer blocked in `write(1)` on a full pipe would leave the message queued behind
    /// it: when the writer is idle the message is queued in order with the bar (so it is
    /// out before a quick exit); when it is busy, a thread of its own writes it straight
    /// to standard error.
    func notice(_ text: String) {
        let isQueued = state.withLock { state -> Bool in
            guard state.queuedHandOvers == 0 else { return false }
            var writes = Writes()
            let bar = state.bar
            if bar != nil { erase(&state, &writes) }
            writes.add(text.utf8, to: errorFD)
            if let bar { draw(state.redraw?() ?? bar, &state, &writes) }
            handOver(writes, &state)
            return true
        }
        guard !isQueued else { return }
        let fd = errorFD
        DedicatedThread.start(name: "sdfetch-stderr") { FileDescriptorWriter.write(text, to: fd) }
    }

    /// Replaces the bar with `line` (already fitted to the terminal width); `redraw` makes
    /// a fresh one for redraws below later lines.
    func showBar(_ line: String, redraw: (@Sendable () -> String)? = nil) {
        change { state, writes in
            state.redraw = redraw
            draw(line, &state, &writes)
        }
    }

    /// Erases the bar for good (before the summary).
    func removeBar() {
        change { state, writes in
            state.redraw = nil
            erase(&state, &writes)
        }
    }

    /// Hands pending output over when the last hand-over is older than ``flushInterval``.
    func flushIfStale() {
        change { state, writes in
            if !state.pending.isEmpty, ContinuousClock.now - state.lastFlush >= Self.flushInterval {
                flush(&state, &writes)
            }
        }
    }

    /// Hands all pending output over (end of run).
    func flush() {
        change { state, writes in flush(&state, &writes) }
    }

    /// Returns once the writer's queue is under ``queueLimit``: the consumer's back-pressure.
    func waitForRoom() async {
        guard state.withLock({ $0.queuedBytes > Self.queueLimit }) else { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let hasRoom = state.withLock { state -> Bool in
                guard state.queuedBytes > Self.queueLimit else { return true }
                state.roomWaiters.append(waiter)
                return false
            }
            if hasRoom { waiter.resume() }
        }
    }

    /// Writes everything queued and ends the writer thread; later calls write on their own
    /// thread.
    fileprivate func close() async {
        state.withLock { state in
            var writes = Writes()
            flush(&state, &writes)
            handOver(writes, &state)
            state.isClosed = true
        }
        await writer.shutdown()
    }

    // MARK: - Under the lock

    /// Runs `body` under the lock and queues the writes it made.
    private func change(_ body: (inout State, inout Writes) -> Void) {
        state.withLock { state in
            var writes = Writes()
            body(&state, &writes)
            handOver(writes, &state)
        }
    }

    /// Queues `writes` for the writer thread; queued under the lock, so in call order.
    private func handOver(_ writes: Writes, _ state: inout State) {
        guard !writes.items.isEmpty else { return }
        guard !state.isClosed, !writesInline else { return writes.perform() }
        state.queuedBytes += writes.byteCount
        state.queuedHandOvers += 1
        writer.submit { [self] in
            writes.perform()
            didWrite(writes.byteCount)
        }
    }

    /// The writer finished a hand-over of `count` bytes: wake waiters once there is room.
    private func didWrite(_ count: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.queuedBytes -= count
            state.queuedHandOvers -= 1
            guard state.queuedBytes <= Self.queueLimit else { return [] }
            defer { state.roomWaiters = [] }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// A regular file or `/dev/null`: a write there never waits for a reader.
    private static func cannotBlock(_ fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        if (info.st_mode & S_IFMT) == S_IFREG { return true }
        var null = stat()
        return (info.st_mode & S_IFMT) == S_IFCHR && stat("/dev/null", &null) == 0 && info.st_rdev == null.st_rdev
    }

    private func flush(_ state: inout State, _ writes: inout Writes) {
        state.lastFlush = .now
        guard !state.pending.isEmpty else { return }
        writes.add(state.pending, to: outputFD)
        state.pending.removeAll(keepingCapacity: true)
    }

    private func draw(_ line: String, _ state: inout State, _ writes: inout Writes) {
        if canEraseLine {
            writes.add(("\r" + line + "\u{1B}[K").utf8, to: errorFD)
        } else {
            let blank =
                (state.bar?.count ?? 0) > line.count ? String(repeating: " ", count: state.bar!.count - line.count) : ""
            writes.add(("\r" + line + blank).utf8, to: errorFD)
        }
        state.bar = line
    }

    private func erase(_ state: inout State, _ writes: inout Writes) {
        guard let bar = state.bar else { return }
        let text = canEraseLine ? "\r\u{1B}[K" : "\r" + String(repeating: " ", count: bar.count) + "\r"
        writes.add(text.utf8, to: errorFD)
        state.bar = nil
    }
}

/// Runs `body` with the run's ``Console`` and, however `body` ends, writes what is still
/// queued and joins the writer thread: nothing printed is lost at exit.
/// `output` and `error` stand for standard output and standard error (a test's pipes).
func withConsole<T, E: Error>(
    environment: ProcessEnvironment, output: Int32 = STDOUT_FILENO, error: Int32 = STDERR_FILENO,
    isolation: isolated (any Actor)? = #isolation, _ body: (Console) async throws(E) -> T
) async throws(E) -> T {
    try await withLifetime(
        of: Console(environment: environment, output: output, error: error), end: { await $0.close() }, body)
}
