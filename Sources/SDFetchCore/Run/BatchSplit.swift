import FoundationEssentials

/// Spreads the per-item work of one batch (parse and hash a line, probe the cache, look at
/// an `-o` file) over the machine's cores: a warm run is nothing but such items, and one
/// task per stage would leave a core idle (the bench's warm target: >= 100,000 URLs/s,
/// `Scripts/bench.d/RESULTS.md`).
///
/// The batch is cut into one slice per core; the first slice runs on the calling task, the
/// rest as child tasks, and the results come back in the batch's order. Small batches (a
/// slow producer's few lines) run inline: a task costs more than a few items.
enum BatchSplit {
    /// Items below which a batch is not split.
    static let minimumSplit = 64
    private static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// `items.map(transform)`, sliced over the cores when `items` is large enough. A slice
    /// runs its items one after another; `transform` may suspend (a hit's resize does).
    static func map<Item: Sendable, Output: Sendable>(
        _ items: [Item], _ transform: @escaping @Sendable (Item) async -> Output
    ) async -> [Output] {
        let slices = min(cores, items.count / (minimumSplit / 2))
        guard slices > 1 else { return await mapInOrder(items[...], transform) }
        let size = (items.count + slices - 1) / slices
        return await withTaskGroup(of: (Int, [Output]).self) { group in
            for start in stride(from: size, to: items.count, by: size) {
                let slice = items[start..<min(start + size, items.count)]
                group.addTask { (start, await mapInOrder(slice, transform)) }
            }
            var parts = [(0, await mapInOrder(items[..<size], transform))]
            for await part in group { parts.append(part) }
            return parts.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
    }

    private static func mapInOrder<Item, Output>(
        _ items: ArraySlice<Item>, _ transform: (Item) async -> Output
    ) async -> [Output] {
        var outputs: [Output] = []
        outputs.reserveCapacity(items.count)
        for item in items { outputs.append(await transform(item)) }
        return outputs
    }
}
