import Synchronization

/// Body bytes counted as curl delivers them, over every transfer that carries this meter,
/// and the declared bytes still to come: what a progress display needs for a byte count,
/// a rate and an end time that move while a large or slow transfer is under way.
///
/// Written on the ``CurlEngine`` loop thread only: one relaxed atomic add per write callback
/// (no lock on that path), and one add when a transfer's body starts and when it ends.
/// Read from any thread, at the reader's own pace.
public final class TransferMeter: Sendable {
    /// Body bytes taken by write callbacks, every response and status included.
    private let arrived = Atomic<Int>(0)
    /// Bytes expected so far: the declared length (`Content-Length`) of each body under
    /// way, replaced by what actually arrived once the transfer ends.
    private let expected = Atomic<Int>(0)

    public init() {}

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
        if let declared, declared > 0 { expected.add(Int(declared), ordering: .relaxed) }
    }

    /// `count` more body bytes were taken.
    func received(_ count: Int) {
        arrived.add(count, ordering: .relaxed)
    }

    /// A transfer ended with `received` body bytes after declaring `declared` (0: none), so
    /// what it was expected to bring becomes what it brought.
    func transferEnded(declared: Int64, received: Int64) {
        let correction = received - declared
        if correction != 0 { expected.add(Int(correction), ordering: .relaxed) }
    }
}
