/// A first-in first-out list on an array: appended at the end, taken from a moving start,
/// the taken prefix dropped once everything is taken (no shifting, amortized O(1) a take).
/// Loop-thread state: ``HostScheduler``'s per-host queues, ``HostProbes``' candidates.
struct FirstInFirstOut<Element> {
    private var items: [Element] = []
    private var start = 0

    var isEmpty: Bool { start == items.count }

    mutating func append(_ element: Element) { items.append(element) }

    /// The first element, taken; nil when the list is empty.
    mutating func popFirst() -> Element? {
        guard start < items.count else { return nil }
        defer {
            start += 1
            if start == items.count {
                items.removeAll(keepingCapacity: true)
                start = 0
            }
        }
        return items[start]
    }

    /// Drops the elements `isRemoved` picks, keeping the others in order.
    mutating func removeAll(where isRemoved: (Element) -> Bool) {
        items = items[start...].filter { !isRemoved($0) }
        start = 0
    }
}
