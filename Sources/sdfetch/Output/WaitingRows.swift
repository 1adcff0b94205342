import SDFetchCore

/// Repeated rows whose key's result comes after the input's end (its fetch was under way),
/// each to be written as that result's line with the row's own tail
/// (``ResultPrinter/rowTail(source:fields:)``).
///
/// Memory stays bounded however many rows repeat a slow key: tails are kept in memory up
/// to ``memoryBudget`` bytes and written right after their key's line; past it they go to
/// an unlinked temporary file, with the heads of their keys' lines, and are written at the
/// run's end (``finish(_:)``), in one pass. What stays in memory per key is its digest and
/// a place in a file. Owned by the single event consumer; not shared.
final class WaitingRows {
    /// Bytes of tails held in memory before the rest spill.
    static let memoryBudget = 4 << 20

    private var inMemory: [KeyDigest: [String]] = [:]
    private(set) var memoryBytes = 0
    /// Spilled tails (`DIGEST<TAB>TAIL`), their keys, and the heads of those keys' lines.
    private var spilled: SpoolFile?
    private var spilledKeys: Set<KeyDigest> = []
    private var heads: SpoolFile?
    private var headPlaces: [KeyDigest: SpoolFile.Place] = [:]

    var isEmpty: Bool { inMemory.isEmpty && spilledKeys.isEmpty }

    /// Keeps `tail`, a row of `digest`'s key.
    func add(_ tail: String, digest: KeyDigest) {
        if memoryBytes + tail.utf8.count <= Self.memoryBudget {
            memoryBytes += tail.utf8.count
            inMemory[digest, default: []].append(tail)
            return
        }
        if spilled == nil { spilled = SpoolFile() }
        spilled?.add(digest.hex + "\t" + tail)
        spilledKeys.insert(digest)
    }

    /// The lines of the rows waiting in memory for `line`, the result line of `digest`'s key;
    /// its spilled rows wait for ``finish(_:)``.
    func lines(after line: String, digest: KeyDigest) -> [String] {
        if spilledKeys.contains(digest), headPlaces[digest] == nil {
            if heads == nil { heads = SpoolFile() }
            // A line's head holds no newline (JSON escapes it), so it is one spool record.
            headPlaces[digest] = heads?.add(digest.hex + "\t" + ResultPrinter.rowHead(line) + "\n")
        }
        guard let tails = inMemory.removeValue(forKey: digest) else { return [] }
        memoryBytes -= tails.reduce(0) { $0 + $1.utf8.count }
        return tails.map { ResultPrinter.withRowTail(line, $0) }
    }

    /// Writes the spilled rows whose key's line came, each as that line with the row's tail.
    func finish(_ write: (String) async -> Void) async {
        guard let spilled, let heads else { return }
        // The head of the last key read: rows of one key come in runs.
        var last: (digest: KeyDigest, head: String)?
        await spilled.readAll { record, _ in
            guard let tab = record.firstIndex(of: "\t"), let digest = KeyDigest(hex: record[..<tab]) else { return }
            let tail = record[record.index(after: tab)...]
            if last?.digest != digest {
                guard let place = headPlaces[digest], let held = heads.record(at: place),
                    let headTab = held.firstIndex(of: "\t")
                else { return }
                last = (digest, String(held[held.index(after: headTab)...].dropLast()))
            }
            if let last { await write(last.head + tail) }
        }
        spilled.clear()
        heads.clear()
        spilledKeys.removeAll()
        headPlaces.removeAll()
    }
}
