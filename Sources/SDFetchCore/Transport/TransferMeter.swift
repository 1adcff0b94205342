import Synchronization

/// Body bytes counted as curl delivers them, over every transfer that carries this meter,
/// and the declared bytes still to come: what a progress display needs for a byte count,
/// a rate and an end time that move while a large or slow transfer is under way.
///
/// Written on the ``CurlEngine`` loop thread only: one relaxed atomic add per write callback
/// (no lock on that path), and a few when a transfer starts, is answered, sends a request,
/// its body starts and it ends.
/// Read from any thread, at the reader's own pace.
public final class TransferMeter: Sendable {
    /// Body bytes taken by write callbacks, every response and status included.
    private let arrived = Atomic<Int>(0)
    /// Bytes expected so far: the declared length (`Content-Length`) of each body under
    /// way, replaced by what actually arrived once the transfer ends.
    private let expected = Atomic<Int>(0)

    /// HTTP requests sent: every try and every redirect hop (curl's pre-request callback).
    private let sent = Atomic<Int>(0)
    /// Bodies whose first bytes arrived, and those of them that ended.
    private let bodies = Atomic<Int>(0)
    private let bodiesEnded = Atomic<Int>(0)
    /// Transfers waiting for their response, and the latest of their deadlines (monotonic
    /// nanoseconds; 0 when none waits). Written by the loop thread only.
    private let awaiting = Atomic<Int>(0)
    private let latestDeadline = Atomic<UInt64>(0)

    public init() {}

    /// HTTP requests sent so far, each try and each redirect hop counted: what a server's
    /// log would show.
    public var requestsSent: Int { sent.load(ordering: .relaxed) }

    /// A request is about to be sent.
    func requestSent() {
        sent.add(1, ordering: .relaxed)
    }

    /// Body bytes received so far.
    public var arrivedBytes: Int64 { Int64(arrived.load(ordering: .relaxed)) }

    /// Declared bytes not yet arrived of the transfers under way (a body without a
    /// `Content-Length` adds nothing); 0 when none is under way.
    public var pendingBytes: Int64 {
        // `expected` first: a transfer ending between the two loads can only make this smaller.
        let expected = expected.load(ordering: .relaxed)
        return Int64(max(0, expected - arrived.load(ordering: .relaxed)))
    }

    /// A body of `declared` bytes (nil: not declared) starts arriving.
    func bodyStarted(declared: Int64?) {
        bodies.add(1, ordering: .relaxed)
        if let declared, declared > 0 { expected.add(Int(declared), ordering: .relaxed) }
    }

    /// Bodies started so far, and the bytes they brought or declared: their mean is what an
    /// image of this run weighs, for a display that estimates the bytes still to come.
    public var bodiesAndBytes: (bodies: Int, bytes: Int64) {
        (bodies.load(ordering: .relaxed), Int64(max(0, expected.load(ordering: .relaxed))))
    }

    /// Bodies started and not yet ended.
    public var bodiesUnderWay: Int { max(0, bodies.load(ordering: .relaxed) - bodiesEnded.load(ordering: .relaxed)) }

    // MARK: - Waiting for responses

    /// A transfer starts waiting for its response (connecting, sending), given up by
    /// `deadline` (monotonic nanoseconds: its timeout) at the latest.
    func awaitStarted(deadline: UInt64) {
        awaiting.add(1, ordering: .relaxed)
        if deadline > latestDeadline.load(ordering: .relaxed) { latestDeadline.store(deadline, ordering: .relaxed) }
    }

    /// A transfer stopped waiting: its response began, or it ended without one.
    func awaitEnded() {
        if awaiting.subtract(1, ordering: .relaxed).newValue == 0 { latestDeadline.store(0, ordering: .relaxed) }
    }

    /// Transfers waiting for a response now, and how long until the last of them is given
    /// up at the latest (nil: none waits): a dead host's connects hold the run's end that long.
    public var awaitingResponses: (count: Int, longestWait: Duration?) {
        let count = awaiting.load(ordering: .relaxed)
        let deadline = latestDeadline.load(ordering: .relaxed)
        let now = MonotonicTime.nanoseconds()
        guard count > 0, deadline > now else { return (max(0, count), nil) }
        return (count, .nanoseconds(Int64(deadline - now)))
    }

    /// `count` more body bytes were taken.
    func received(_ count: Int) {
        arrived.add(count, ordering: .relaxed)
    }

    /// A transfer ended with `received` body bytes after declaring `declared` (0: none), so
    /// what it was expected to bring becomes what it brought.
    func transferEnded(declared: Int64, received: Int64) {
        bodiesEnded.add(1, ordering: .relaxed)
        let correction = received - declared
        if correction != 0 { expected.add(Int(correction), ordering: .relaxed) }
    }
}
