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

    @Test("--json: 50 MB of rows repeating a URL still being fetched when the input ends wait on disk")
    func repeatedRowsOfASlowURL() async throws {
        let server = try await LoopbackServer()
        // Slow enough that the whole list is read first, so every repeat waits for its line.
        server.route("/slow.png", ScriptedResponse(status: 200, body: SampleImages.png(seed: 1), delay: .seconds(15)))
        let url = server.url("/slow.png")
        let caption = String(repeating: "c", count: 2000)
        var list = ""
        for index in 0..<25_000 { list += "{\"url\":\"\(url)\",\"i\":\(index),\"caption\":\"\(caption)\"}\n" }
        let file = directory.write(list, to: "repeats.jsonl")
        let measured = try await PeakMemoryRun.launch(
            BuiltProduct.path("sdfetch"),
            ["--no-config", "--json", "-q", "--cache-dir", directory.appending("cache"), file],
            report: directory.appending("peak.txt"))

        let lines = measured.run.standardOutput.split(separator: "\n")
        #expect(measured.run.status == 0)
        #expect(lines.count == 25_000)
        #expect(lines.allSatisfy { $0.contains("\"status\":\"downloaded\"") && $0.contains("\"duplicates\":24999") })
        // Every row once, with its own fields.
        let rows = Set(lines.compactMap { line -> Int? in
            guard let start = line.range(of: "\"i\":")?.upperBound else { return nil }
            return Int(line[start...].prefix { $0.isNumber })
        })
        #expect(rows == Set(0..<25_000))
        #expect(server.requests(for: "/slow.png") == 1)
        // Held in memory, the 50 MB of rows came on top of the process's own 35-40 MB.
        #expect(measured.peakKiB < 70 << 10, "peak RSS \(measured.peakKiB) KiB")
    }
}
