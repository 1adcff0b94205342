import Foundation
import SDFetchCore
import Testing

@testable import sdfetch

/// `--json` keeps the rows that repeat a key still being fetched when the input ends, to
/// write each after that key's line: memory bounded (``WaitingRows``), whatever their number.
@Suite("--json rows waiting for a slow key")
struct WaitingRowsMemoryTests {
    /// The process's resident bytes now (`/proc/self/statm`, pages of 4 KiB).
    private func resident() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        return (Int(statm.split(separator: " ")[1]) ?? 0) * 4096
    }

    @Test("80 MB of rows repeating a key whose fetch is under way at the input's end grow memory by little")
    func rowsWaitOnDisk() async throws {
        let key = try URLKey(parsing: "http://h/slow.png")
        let caption = String(repeating: "c", count: 2000)
        let rows = (0..<40_000).map { index in
            RepeatedRow(
                digest: key.digest, source: "list.jsonl:\(index + 2)",
                fields: RowFields(names: ["i", "caption"], values: [.json(String(index)), .text(caption)]))
        }
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(discard) }
        let terminal = Terminal(environment: .detached(), progress: .never, quiet: false)
        let grown = try await withConsole(environment: .detached(), output: discard, error: discard) { console throws in
            var consumer = EventConsumer(console: console, terminal: terminal, isJSON: true)
            for batch in stride(from: 0, to: rows.count, by: 1000) {
                await consumer.handle(.repeatedRows(Array(rows[batch..<batch + 1000])))
            }
            let before = try resident()
            // The key's result has not come: every row now waits for its line.
            await consumer.handle(.inputFinished(duplicates: [key.digest: rows.count]))
            let grown = try resident() - before
            await consumer.handle(.results([FetchResult(url: key.string, key: key, status: .downloaded)]))
            await consumer.handle(.finished(RunSummary()))
            return grown
        }
        // Held in memory, the rows' tails alone were 80 MB.
        #expect(grown < 24 << 20, "resident memory grew by \(grown >> 20) MB")
    }
}
