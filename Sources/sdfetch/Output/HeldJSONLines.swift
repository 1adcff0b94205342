import FoundationEssentials
import Glibc
import SDFetchCore

/// JSON result lines written before the input was fully read, held until it is, so each
/// line's `duplicates` is the final count whatever the timing (README, "For scripts").
///
/// A later line of the input may repeat a key whose result is already done, so no count is
/// final before the last line is read. Text output has no such field and streams at once;
/// JSON from a regular file is usually read through early, while JSON from a pipe is held
/// until the producer closes it. The held lines go to an unlinked temporary file rather
/// than memory, so a warm run over millions of lines stays within its memory budget.
/// Owned by the single event consumer; not shared.
final class HeldJSONLines {
    /// The spool (`tmpfile(3)`: already unlinked), or nil when none could be made.
    private let spool: UnsafeMutablePointer<FILE>?
    /// Used when no spool file could be made, or once writing to it failed (a full `/tmp`):
    /// those records follow the spooled ones, so the order holds.
    private var inMemory: [String] = []
    private var hasSpoolFailed = false
    private(set) var count = 0

    init() {
        spool = tmpfile()
    }

    deinit {
        if let spool { fclose(spool) }
    }

    /// Keeps `line` (one rendered object, `"duplicates"` as known now) of the result for `digest`.
    func hold(_ line: String, digest: KeyDigest?) {
        count += 1
        let record = (digest?.hex ?? "-") + "\t" + line
        guard let spool, !hasSpoolFailed, fputs(record, spool) >= 0 else {
            hasSpoolFailed = spool != nil
            inMemory.append(record)
            return
        }
    }

    /// Writes every held line through `write`, in order, with the final count from `duplicates`.
    func release(duplicates: [KeyDigest: Int], _ write: (String) async -> Void) async {
        let byHex = Dictionary(uniqueKeysWithValues: duplicates.map { ($0.key.hex, $0.value) })
        func emit(_ record: Substring) async {
            guard let tab = record.firstIndex(of: "\t") else { return }
            let line = String(record[record.index(after: tab)...])
            guard let final = byHex[String(record[..<tab])] else { return await write(line) }
            await write(Self.patch(line, duplicates: final))
        }
        defer {
            inMemory.removeAll()
            count = 0
        }
        if let spool {
            fflush(spool)
            rewind(spool)
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(buffer) }
            while getline(&buffer, &capacity, spool) > 0, let buffer {
                await emit(Substring(String(cString: buffer)))
            }
            rewind(spool)
            ftruncate(fileno(spool), 0)
        }
        for record in inMemory { await emit(Substring(record)) }
    }

    /// `line` with its `"duplicates"` member set to `count`.
    ///
    /// Safe as a text replacement: inside a JSON string every `"` is escaped, so `,"duplicates":`
    /// can only be the member itself.
    static func patch(_ line: String, duplicates count: Int) -> String {
        guard let member = line.firstRange(of: ",\"duplicates\":") else { return line }
        let valueEnd = line[member.upperBound...].firstIndex { !$0.isNumber } ?? line.endIndex
        var patched = line
        patched.replaceSubrange(member.upperBound..<valueEnd, with: String(count))
        return patched
    }
}
