import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

@Suite("Streamed URL lists", .cleansUp)
struct URLListReaderTests {
    let directory = TemporaryDirectory("input")

    private func lines(_ sources: [InputSource], standardInput: Int32 = STDIN_FILENO) async -> [InputItem] {
        let reader = URLListReader(sources: sources, standardInput: standardInput)
        var items: [InputItem] = []
        while let batch = await reader.next() { items += batch }
        return items
    }

    private func texts(_ items: [InputItem]) -> [String] {
        items.compactMap { if case .line(let line) = $0 { line.text } else { nil } }
    }

    @Test("skips blank and comment lines and tolerates CRLF, a BOM and surrounding whitespace")
    func tolerantLines() async {
        let file = directory.write(
            "\u{FEFF}http://h/a.png\r\n\n   # comment\r\n\t http://h/b.png  \r\n#x\nhttp://h/c.png", to: "l.txt")
        let items = await lines([.file(file)])
        #expect(texts(items) == ["http://h/a.png", "http://h/b.png", "http://h/c.png"])
        let numbers = items.compactMap { if case .line(let line) = $0 { line.number } else { nil } }
        #expect(numbers == [1, 4, 6])
    }

    @Test(
        "a second read goes through the first one's descriptor: a file replaced meanwhile is not read",
        .timeLimit(.minutes(1)))
    func rereadKeepsTheFile() async throws {
        let path = directory.write("http://kept.test/1\nhttp://kept.test/2\n", to: "list.txt")
        let reader = URLListReader(sources: [.file(path)])
        var first: [InputItem] = []
        while let batch = await reader.next() { first += batch }
        // Another list renamed over the path, then a FIFO no writer ever opens: neither is read.
        let other = directory.write("http://other.test/1\n", to: "other.txt")
        #expect(rename(other, path) == 0)
        let again = try #require(reader.reread())
        var second: [InputItem] = []
        while let batch = await again.next() { second += batch }
        #expect(unlink(path) == 0 && mkfifo(path, 0o600) == 0)
        let third = try #require(reader.reread())
        var read: [InputItem] = []
        while let batch = await third.next() { read += batch }

        #expect(texts(first) == ["http://kept.test/1", "http://kept.test/2"])
        #expect(texts(second) == texts(first))
        #expect(texts(read) == texts(first))
    }

    @Test("reads files in order and reports an unreadable one without stopping")
    func unreadableFileGoesOn() async {
        let first = directory.write("http://h/1\n", to: "first.txt")
        let second = directory.write("http://h/2\n", to: "second.txt")
        let items = await lines([.file(first), .file(directory.appending("missing.txt")), .file(second)])
        #expect(texts(items) == ["http://h/1", "http://h/2"])
        let unreadable = items.compactMap { if case .unreadable(let source, _) = $0 { source } else { nil } }
        #expect(unreadable == [directory.appending("missing.txt")])
    }

    @Test("names standard input '-' and reads it from a pipe")
    func standardInput() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = "http://h/x\nhttp://h/y\n"
        _ = text.withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        let items = await lines([.standardInput], standardInput: fds[0])
        close(fds[0])
        let sources = items.compactMap { if case .line(let line) = $0 { line.source } else { nil } }
        #expect(sources == ["-", "-"])
        #expect(texts(items) == ["http://h/x", "http://h/y"])
    }

    @Test("cuts a line without end at the length limit and flags it")
    func overlongLine() async {
        let long = "http://h/" + String(repeating: "a", count: 100_000)
        let file = directory.write(long + "\nhttp://h/ok\n", to: "long.txt")
        let items = await lines([.file(file)])
        guard case .line(let first) = items.first else {
            Issue.record("no line read")
            return
        }
        #expect(first.isOverlong)
        #expect(first.text.utf8.count <= URLKey.maxLength + 1)
        #expect(texts(items).last == "http://h/ok")
    }

    @Test("a list of 20,000 lines arrives complete in batches")
    func manyLines() async {
        let body = (0..<20_000).map { "http://h/\($0).png" }.joined(separator: "\n")
        let file = directory.write(body, to: "many.txt")
        let items = await lines([.file(file)])
        #expect(items.count == 20_000)
        #expect(texts(items).last == "http://h/19999.png")
    }

    @Test("bytes that are not UTF-8 are percent-encoded, so two such URLs stay two keys")
    func invalidUTF8KeptApart() async throws {
        let path = directory.appending("bytes.txt")
        var bytes = Array("http://h/a?x=".utf8) + [0xFF] + Array("\nhttp://h/a?x=".utf8) + [0xFE] + Array("\n".utf8)
        bytes += Array("http://h/caf\u{E9}\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let got = texts(await lines([.file(path)]))
        #expect(got == ["http://h/a?x=%FF", "http://h/a?x=%FE", "http://h/caf\u{E9}"])
        let keys = try got.map { try URLKey(parsing: $0) }
        #expect(keys[0] != keys[1])
    }

    @Test("a regular file's meaningful lines are counted before the first batch; a pipe's are not")
    func countedUpFront() async throws {
        let file = directory.write("\u{FEFF}# head\nhttp://h/1\n\n  \r\n  # c\n\thttp://h/2\r\nhttp://h/3", to: "c.txt")
        let reader = URLListReader(sources: [.file(file)])
        _ = await reader.next()
        #expect(reader.expectedLines == 3)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[1])
        let piped = URLListReader(sources: [.file(file), .standardInput], standardInput: fds[0])
        while await piped.next() != nil {}
        #expect(piped.expectedLines == nil)
        close(fds[0])
    }

    @Test("the up-front count agrees with the lines read, across chunk boundaries and odd whitespace")
    func countAgreesWithReader() async {
        var generator = SeededRandom("URL list count")
        let shapes = ["http://h/x", "  http://h/y\t", "#c", "  # c", "", " \r", "\t\t", "http://h/z\r"]
        var lines = (0..<40_000).map { _ in shapes[Int(generator.next() % UInt64(shapes.count))] }
        // Two lines longer than a read chunk (64 KiB) and the URL limit.
        lines.insert(String(repeating: "a", count: 100_000), at: 10_000)
        lines.insert("   " + String(repeating: "b", count: 70_000), at: 30_000)
        let body = lines.joined(separator: "\n")
        let file = directory.write("\u{FEFF}" + body, to: "mixed.txt")
        let reader = URLListReader(sources: [.file(file)])
        var read = 0
        while let batch = await reader.next() { read += batch.count }
        #expect(reader.expectedLines == read)
    }
}

@Suite("Invalid input lines", .cleansUp, .timeLimit(.minutes(1)))
struct InvalidLineTests {
    let directory = TemporaryDirectory("invalid")

    @Test("an invalid line is reported with its file and line number and the run goes on")
    func invalidLineReported() async throws {
        let server = try await LoopbackServer()
        server.route("/ok.png", .ok(SampleImages.png()))
        let file = directory.write("ftp://h/a.png\n\(server.url("/ok.png"))\nhttp://bad host/\n", to: "list.txt")
        let fetcher = Fetcher.scoped(
            options: FetchOptions(), cache: try DiskCache(directory: directory.appending("cache")))
        let collected = await CollectedRun.collect(FetchRun(fetcher: fetcher, sources: [.file(file)]))

        let invalid = collected.results.filter { $0.status == .invalid }
        #expect(invalid.map(\.source) == ["\(file):1", "\(file):3"])
        #expect(invalid.allSatisfy { $0.failure?.kind == .invalidURL })
        #expect(collected.results.contains { $0.status == .downloaded })
    }
}
