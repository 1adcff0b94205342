import Foundation
import SDFetchTestSupport
import Testing

/// A few KB of gzipped list cost what the rows they hold are worth, not what their
/// delimiters or columns would take if each were kept: fields per row and columns per
/// header are capped, and a flagged row stops collecting.
@Suite("memory with hostile lists", .cleansUp, .timeLimit(.minutes(2)))
struct HostileListMemoryTests {
    let directory = TemporaryDirectory("hostile-list-memory")

    /// Runs `sdfetch --offline` over `file` and returns what it printed and its peak memory.
    private func run(_ file: String, _ extra: [String] = []) async throws -> PeakMemoryRun {
        try await PeakMemoryRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "--offline", "--json", "--cache-dir", directory.appending("cache")] + extra + [file],
            report: directory.appending("peak.txt"))
    }

    @Test("a gzipped row of 20 million commas: one invalid row, well under 100 MB")
    func rowOfCommas() async throws {
        let row = "http://127.0.0.1:9/a.png" + String(repeating: ",", count: 20_000_000)
        let file = directory.write("url,caption\n" + row + "\n", to: "commas.csv")
        try Gzip.compress(file)
        let measured = try await run(file + ".gz")

        let lines = measured.run.standardOutput.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\"status\":\"invalid\"") == true)
        #expect(measured.run.standardError.contains("row with more than 4096 fields"))
        // Kept whole, the field ends alone were 160 MB, and each 64 KiB chunk copied them.
        #expect(measured.peakKiB < 100 << 10, "peak RSS \(measured.peakKiB) KiB")
    }

    @Test("a gzipped TSV header of 5 million columns: unreadable, well under 100 MB")
    func wideHeader() async throws {
        let header = "url" + String(repeating: "\tc", count: 5_000_000)
        let file = directory.write(header + "\nhttp://127.0.0.1:9/a.png\n", to: "wide.tsv")
        try Gzip.compress(file)
        let measured = try await run(file + ".gz")

        #expect(measured.run.status == 3)
        #expect(measured.run.standardError.contains("the header row has more than 4096 columns"))
        #expect(measured.peakKiB < 100 << 10, "peak RSS \(measured.peakKiB) KiB")
    }
}
