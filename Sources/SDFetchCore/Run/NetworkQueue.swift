import Synchronization

/// A bounded first-in first-out hand-over between one producer and one consumer task: the
/// producer waits while `capacity` elements are queued, the consumer while none is. The
/// run's intake queues the lines that need the network here and reads on; the
/// ``NetworkStarter`` starts them as slots free up. The capacity is how far the intake
/// reads ahead of the transfers.
///
/// Each element that has to wait (queued while the consumer is full, or queued when it
/// becomes full) is handed to `willWait` once, outside the lock: the run probes its host.
/// One watcher (the run's ``HostScout``) may wait for the consumer to be full
/// (``untilConsumerFull()``).
final class NetworkQueue<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var head = 0
        /// Elements before this index of `elements` went to `willWait` (or were taken).
        var announced = 0
        var isFinished = false
        var isConsumerFull = false
        var producer: CheckedContinuation<Void, Never>?
        var consumer: CheckedContinuation<Element?, Never>?
        var watcher: CheckedContinuation<Bool, Never>?

        var count: Int { elements.count - head }

        mutating func popFirst() -> Element {
            let element = elements[head]
            head += 1
            announced = max(announced, head)
            // Drop the taken prefix once it is most of the array: amortized O(1) a pop.
            if head >= 1024 && head * 2 >= elements.count {
                elements.removeFirst(head)
                announced -= head
                head = 0
            }
            return element
        }

        /// The queued elements not announced yet, now announced.
        mutating func unannounced() -> ArraySlice<Element> {
            defer { announced = elements.count }
            return elements[max(announced, head)...]
        }
    }

    let capacity: Int
    private let willWait: @Sendable (Element) -> Void
    private let state = Mutex(State())

    init(capacity: Int, willWait: @escaping @Sendable (Element) -> Void) {
        precondition(capacity > 0, "a queue holds at least one element")
        self.capacity = capacity
        self.willWait = willWait
    }

    /// Queues `element`, after waiting for room. One producer only.
    func push(_ element: Element) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasRoom = state.withLock { state in
                guard state.count >= capacity else { return true }
                state.producer = continuation
                return false
            }
            if hasRoom { continuation.resume() }
        }
        let (consumer, waits) = state.withLock { state -> (CheckedContinuation<Element?, Never>?, Bool) in
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, false)
            }
            state.elements.append(element)
            guard state.isConsumerFull else { return (nil, false) }
            state.announced = state.elements.count
            return (nil, true)
        }
        consumer?.resume(returning: element)
        if waits { willWait(element) }
    }

    /// The first element, after waiting for one; nil once ``finish()`` was called and the
    /// queue is empty. One consumer only.
    func next() async -> Element? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
            let (taken, producer) = state.withLock { state -> (Element??, CheckedContinuation<Void, Never>?) in
                if state.count > 0 {
                    let element = state.popFirst()
                    defer { state.producer = nil }
                    return (.some(element), state.producer)
                }
                if state.isFinished { return (.some(nil), nil) }
                state.consumer = continuation
                return (nil, nil)
            }
            producer?.resume()
            if let taken { continuation.resume(returning: taken) }
        }
    }

    /// The consumer has no room of its own (`true`: everything queued waits behind it) or
    /// has again.
    func setConsumerFull(_ isFull: Bool) {
        let (waiting, watcher) = state.withLock { state -> (ArraySlice<Element>, CheckedContinuation<Bool, Never>?) in
            state.isConsumerFull = isFull
            guard isFull else { return ([], nil) }
            defer { state.watcher = nil }
            return (state.unannounced(), state.watcher)
        }
        watcher?.resume(returning: true)
        for element in waiting { willWait(element) }
    }

    /// Returns once the consumer is full (true), or once ``finish()`` was called (false).
    /// One watcher only.
    func untilConsumerFull() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if state.isFinished { return false }
                if state.isConsumerFull { return true }
                state.watcher = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// No more elements: the consumer gets nil once it has taken the queued ones.
    func finish() {
        let (consumer, watcher) = state.withLock { state in
            state.isFinished = true
            defer { (state.consumer, state.watcher) = (nil, nil) }
            return (state.consumer, state.watcher)
        }
        consumer?.resume(returning: nil)
        watcher?.resume(returning: false)
    }
}
