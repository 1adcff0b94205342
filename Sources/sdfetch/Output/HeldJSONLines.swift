import FoundationEssentials
import Glibc
import SDFetchCore

/// JSON result lines written before the input was fully read, held until it is, so each
/// line's `duplicates` is the final count whatever the timing (README, "For scripts");
/// with them the tabular rows that repeat a key, each to be written as its key's line with
/// the row's own `source` and `fields`.
///
/// A later line of the input may repeat a key whose result is already done, so no count is
/// final before the last line is read. Text output has no such field and streams at once;
/// JSON from a regular file is usually read through early, while JSON from a pipe is held
/// until the producer closes it. The held lines and rows go to unlinked temporary files
/// rather than memory, so a warm run over millions of lines stays within its memory budget;
/// only the place of each repeated key's line is kept in memory, to write its rows.
/// Owned by the single event consumer; not shared.
final class HeldJSONLines {
    /// The result lines, and the repeated rows' tails.
    private let spool: SpoolFile
    private let rowSpool: SpoolFile
    private(set) var count = 0
    /// Line heads kept while repeated rows are written: a few hundred KB at most.
    static let cachedHeads = 1024

    init() {
        spool = SpoolFile()
        rowSpool = SpoolFile()
    }

    /// Keeps `line` (one rendered object, `"duplicates"` as known now) of the result for `digest`.
    func hold(_ line: String, digest: KeyDigest?) {
        count += 1
        spool.add((digest?.hex ?? "-") + "\t" + line)
    }

    /// Keeps a repeated row: its tail (``ResultPrinter/rowTail(source:fields:)``), to follow
    /// the line of `digest`'s result.
    func holdRow(_ tail: String, digest: KeyDigest) {
        rowSpool.add(digest.hex + "\t" + tail)
    }

    /// Writes every held line through `write`, in order, with the final count from
    /// `duplicates`, then every held row as its key's line with the row's tail. The rows
    /// whose key has no line yet (its fetch still under way) go to `waiting`, for the
    /// caller to write after that line.
    func release(
        duplicates: [KeyDigest: Int], waiting: WaitingRows, _ write: (String) async -> Void
    ) async {
        // Where the line of each repeated key is in the spool: 16 bytes and a place per key.
        var places: [KeyDigest: SpoolFile.Place] = [:]
        await spool.readAll { record, place in
            guard let tab = record.firstIndex(of: "\t") else { return }
            let line = String(record[record.index(after: tab)...])
            guard let digest = KeyDigest(hex: record[..<tab]), let final = duplicates[digest] else {
                return await write(line)
            }
            places[digest] = place
            await write(Self.patch(line, duplicates: final))
        }
        // The shared part of recent keys' lines: rows of one key tend to come in runs, and
        // each read from the spool is a seek and a read.
        var heads: [KeyDigest: String] = [:]
        await rowSpool.readAll { record, _ in
            guard let tab = record.firstIndex(of: "\t"), let digest = KeyDigest(hex: record[..<tab]) else { return }
            let tail = record[record.index(after: tab)...]
            if let head = heads[digest] {
                await write(head + tail)
            } else if let place = places[digest], let held = spool.record(at: place),
                let lineTab = held.firstIndex(of: "\t")
            {
                let line = Self.patch(String(held[held.index(after: lineTab)...]), duplicates: duplicates[digest] ?? 0)
                let head = String(ResultPrinter.rowHead(line))
                if heads.count >= Self.cachedHeads { heads.removeAll(keepingCapacity: true) }
                heads[digest] = head
                await write(head + tail)
            } else {
                waiting.add(String(tail), digest: digest)
            }
        }
        spool.clear()
        rowSpool.clear()
        count = 0
    }

    /// `line` with its `"duplicates"` member set to `count`.
    ///
    /// Safe as a text replacement: inside a JSON string every `"` is escaped, so `,"duplicates":`
    /// can only be the member itself.
    static func patch(_ line: String, duplicates count: Int) -> String {
        let name: StaticString = ",\"duplicates\":"
        guard let member = UTF8Search.firstOffset(of: name, in: line) else { return line }
        let utf8 = line.utf8
        let valueStart = UTF8Search.index(member + name.utf8CodeUnitCount, in: line)
        var valueEnd = valueStart
        while valueEnd < utf8.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[valueEnd]) {
            valueEnd = utf8.index(after: valueEnd)
        }
        return line[..<valueStart] + String(count) + line[valueEnd...]
    }
}
