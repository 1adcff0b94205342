/// The run's network side: takes the lines the intake queued (``NetworkQueue``), in input
/// order, and starts each one's network steps as a child task once one of `limit` slots is
/// free; the child runs the result's last step and publishes it.
///
/// A task of its own, so the intake reads on while every slot is taken: the lines it
/// queues meanwhile have their hosts probed ahead of their turn
/// (``Fetcher/expectNetwork(_:distant:)``), and further ahead, past the queue, the
/// ``HostScout``'s.
struct NetworkStarter: Sendable {
    let fetcher: Fetcher
    let reader: URLListReader
    let ledger: RunLedger
    let delivery: (any ResultDelivery)?
    /// Network fetches in flight at most.
    let limit: Int

    /// Starts every queued line, then waits for the fetches it started.
    func run(_ queue: NetworkQueue<NetworkLine>) async {
        let progress = ledger.progress
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            while let queued = await queue.next() {
                // After Ctrl-C, lines already read are not started.
                guard !reader.isCancelled else { continue }
                if running >= limit {
                    queue.setConsumerFull(true)
                    if await group.next() != nil { running -= 1 }
                    queue.setConsumerFull(false)
                }
                let (fetcher, delivery, ledger) = (self.fetcher, self.delivery, self.ledger)
                progress.networkDidStart()
                group.addTask {
                    let line = queued.line
                    var result = await fetcher.fetch(
                        line.key, spelling: line.line.text, after: queued.stale, pin: line.line.pin)
                    progress.networkDidEnd()
                    await delivery?.deliver(&result)
                    // A maintenance command removed the entry between its store and its
                    // delivery: one more fetch (a lookup, then the network if need be).
                    if result.entryWasRemoved {
                        result = await fetcher.fetch(line.key, spelling: line.line.text, after: nil, pin: line.line.pin)
                        await delivery?.deliver(&result)
                    }
                    result.heldImage = nil
                    line.line.mark(&result)
                    ledger.publish([result])
                }
                running += 1
            }
        }
    }
}

/// A line that needs the network, and the stale entry its request may revalidate.
struct NetworkLine: Sendable {
    let line: UniqueLine
    let stale: CacheEntry?
}
