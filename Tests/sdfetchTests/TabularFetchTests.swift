import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// Tables as lists (`--input-format`, `fields`, one fetch per unique URL) and pinned
/// hashes, through the built `sdfetch` against a loopback server.
@Suite("tabular lists and pinned hashes, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct TabularFetchTests {
    let directory = TemporaryDirectory("table-cli")
    var cache: String { directory.appending("cache") }

    private func sdfetch(_ arguments: [String], input: String = "") async throws -> ProcessRun {
        try await ProcessRun.sdfetch(["--cache-dir", cache] + arguments, input: input)
    }

    private func objects(_ run: ProcessRun) throws -> [[String: Any]] {
        try run.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The objects by their `source` (`FILE:LINE` without the directory).
    private func bySource(_ objects: [[String: Any]]) -> [String: [String: Any]] {
        Dictionary(
            uniqueKeysWithValues: objects.map { object in
                ((object["source"] as? String ?? "-").split(separator: "/").last.map(String.init) ?? "-", object)
            })
    }

    private func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test("a catalogue CSV: one JSON line per row with its fields, one request per unique URL")
    func catalogueCSV() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        // Still being fetched when the input ends: its later rows wait for its result.
        server.route(
            "/slow.png", ScriptedResponse(status: 200, body: SampleImages.png(seed: 3), delay: .milliseconds(400)))
        let csv =
            "\u{FEFF}sku,url,caption\r\n"
            + "A1,\(server.url("/a.png")),\"red, \"\"large\"\"\r\nsecond line\"\r\n"
            + "S1,\(server.url("/slow.png")),slow\r\n"
            + "B1,\(server.url("/b.png")),blue\r\n"
            + "A2,\(server.url("/a.png")),\"the same, again\"\r\n"
            + "S2,\(server.url("/slow.png")),slow again\r\n"
            + "A3,\(server.url("/a.png"))#top,third\r\n"
        let list = directory.write(csv, to: "catalogue.csv")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 0, "\(run.standardError)")
        let rows = bySource(try objects(run))
        #expect(
            rows.keys.sorted() == [
                "catalogue.csv:2", "catalogue.csv:4", "catalogue.csv:5", "catalogue.csv:6",
                "catalogue.csv:7", "catalogue.csv:8",
            ])
        #expect(
            rows["catalogue.csv:2"]?["fields"] as? [String: String] == [
                "sku": "A1", "caption": "red, \"large\"\r\nsecond line",
            ])
        #expect(rows["catalogue.csv:6"]?["fields"] as? [String: String] == ["sku": "A2", "caption": "the same, again"])
        #expect(rows["catalogue.csv:7"]?["fields"] as? [String: String] == ["sku": "S2", "caption": "slow again"])
        for (source, key, duplicates) in [
            ("2", "/a.png", 2), ("6", "/a.png", 2), ("8", "/a.png", 2), ("4", "/slow.png", 1), ("7", "/slow.png", 1),
        ] {
            let row = rows["catalogue.csv:" + source]
            #expect(row?["key"] as? String == server.url(key), "row \(source)")
            #expect(row?["status"] as? String == "downloaded", "row \(source)")
            #expect(row?["duplicates"] as? Int == duplicates, "row \(source)")
        }
        #expect(server.requests(for: "/a.png") == 1)
        #expect(server.requests(for: "/slow.png") == 1)
        #expect(server.totalRequests == 3)
        #expect(run.standardError.contains("3 URLs: 3 downloaded; 3 duplicates coalesced"))

        // Warm: each key's result is published before the input ends, and each of its
        // repeated rows is written from that held line.
        let warm = try await sdfetch(["--json", list])
        let warmRows = bySource(try objects(warm))
        #expect(warmRows.count == 6)
        #expect(warmRows.values.allSatisfy { $0["status"] as? String == "cached" })
        #expect(warmRows["catalogue.csv:8"]?["fields"] as? [String: String] == ["sku": "A3", "caption": "third"])
        #expect(warmRows["catalogue.csv:8"]?["duplicates"] as? Int == 2)
        #expect(server.totalRequests == 3)

        // Text output: one line per unique URL, as for plain lists.
        let text = try await sdfetch([list])
        #expect(text.standardOutput.split(separator: "\n").count == 3)
    }

    @Test("a gzipped TSV: captions as fields, quotes kept, one request per unique URL")
    func gzippedTSV() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let tsv = """
            url\tcaption
            \(server.url("/a.png"))\tA "quoted" cat
            \(server.url("/b.png"))\ta dog
            \(server.url("/a.png"))\tthe cat, again

            """
        let plain = directory.write(tsv, to: "captions.tsv")
        try Gzip.compress(plain)
        let run = try await sdfetch(["--json", plain + ".gz"])

        #expect(run.status == 0, "\(run.standardError)")
        let rows = bySource(try objects(run))
        #expect(rows.count == 3)
        #expect(rows["captions.tsv.gz:2"]?["fields"] as? [String: String] == ["caption": "A \"quoted\" cat"])
        #expect(rows["captions.tsv.gz:4"]?["fields"] as? [String: String] == ["caption": "the cat, again"])
        #expect(rows["captions.tsv.gz:4"]?["status"] as? String == "downloaded")
        #expect(rows["captions.tsv.gz:4"]?["duplicates"] as? Int == 1)
        #expect(server.requests(for: "/a.png") == 1)
        #expect(server.totalRequests == 2)
    }

    @Test("a bad row is invalid at its FILE:LINE and the run goes on")
    func badRow() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let list = directory.write(
            "url,caption\n\"\(server.url("/a.png"))\",\"two\nlines\"\n\(server.url("/a.png")),one,too many\nnot a url,x\n",
            to: "bad.csv")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 1)
        #expect(run.standardError.contains("sdfetch: invalid: \(list):4: 3 fields where the header has 2"))
        #expect(run.standardError.contains("sdfetch: invalid: \(list):5: not an absolute http or https URL"))
        let rows = bySource(try objects(run))
        #expect(rows["bad.csv:2"]?["status"] as? String == "downloaded")
        // The row's fault, not its URL's; a URL that is none stays `invalid-url`.
        #expect(rows["bad.csv:4"]?["error"] as? String == "invalid-row")
        #expect(rows["bad.csv:5"]?["error"] as? String == "invalid-url")
        #expect(rows["bad.csv:5"]?["fields"] as? [String: String] == ["caption": "x"])
        #expect(server.totalRequests == 1)
    }

    @Test("a JSON Lines list: the url key, other members with their JSON types")
    func jsonLines() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let lines = [
            "{\"url\": \"\(server.url("/a.png"))\", \"id\": 7, \"tags\": [\"cat\", \"red\"]}",
            "{\"id\": 8, \"url\": \"\(server.url("/a.png"))\", \"ok\": true}",
            "{\"id\": 9}",
        ]
        let list = directory.write(lines.joined(separator: "\n") + "\n", to: "items.jsonl")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 1)
        let rows = bySource(try objects(run))
        let first = try #require(rows["items.jsonl:1"]?["fields"] as? [String: Any])
        #expect(first["id"] as? Int == 7)
        #expect(first["tags"] as? [String] == ["cat", "red"])
        let second = try #require(rows["items.jsonl:2"]?["fields"] as? [String: Any])
        #expect(second["ok"] as? Bool == true)
        #expect(rows["items.jsonl:2"]?["status"] as? String == "downloaded")
        #expect(rows["items.jsonl:3"]?["error_detail"] as? String == "no 'url' member")
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("a pinned hash the bytes do not match: hash-mismatch, not stored, not recorded")
    func pinMismatch() async throws {
        let server = try await LoopbackServer()
        let good = SampleImages.png(seed: 1)
        server.route("/a.png", .ok(good))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let list = directory.write(
            "url,sha256\n\(server.url("/a.png")),\(sha256(good).uppercased())\n\(server.url("/b.png")),\(sha256(good))\n",
            to: "pinned.csv")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 1)
        let rows = bySource(try objects(run))
        #expect(rows["pinned.csv:2"]?["status"] as? String == "downloaded")
        #expect(rows["pinned.csv:3"]?["status"] as? String == "failed")
        #expect(rows["pinned.csv:3"]?["error"] as? String == "hash-mismatch")
        #expect(rows["pinned.csv:3"]?["sha256"] as? String == sha256(SampleImages.png(seed: 2)))
        #expect(
            try DiskCache(directory: cache, readOnly: true).entry(for: URLKey(parsing: server.url("/b.png"))) == nil)
        let failed = try await ProcessRun.sdfetch(["failed", "--cache-dir", cache, "list"])
        #expect(!failed.standardOutput.contains("/b.png"))
        // Not recorded: the next run asks again.
        _ = try await sdfetch([list])
        #expect(server.requests(for: "/b.png") == 2)
    }

    @Test("a cached entry with other bytes than the pin is fetched again, not served; --offline checks the pins")
    func cachedEntryUnderAnotherPin() async throws {
        let server = try await LoopbackServer()
        let old = SampleImages.png(seed: 1)
        let new = SampleImages.png(seed: 2)
        server.route("/a.png", .ok(old), .ok(new))
        let plain = directory.write(server.url("/a.png") + "\n", to: "plain.txt")
        #expect(try await sdfetch([plain]).status == 0)  // the cache now holds `old`

        let lock = directory.write("url\tsha256\n\(server.url("/a.png"))\t\(sha256(new))\n", to: "images.tsv")
        let offlineBefore = try await sdfetch(["--offline", lock])
        #expect(offlineBefore.status == 1)
        #expect(offlineBefore.standardError.contains("hash-mismatch"))
        #expect(server.requests(for: "/a.png") == 1)

        let fetched = try await sdfetch([lock])
        #expect(fetched.status == 0, "\(fetched.standardError)")
        #expect(fetched.standardOutput.hasPrefix("downloaded\t"))
        #expect(server.requests(for: "/a.png") == 2)
        #expect(
            try DiskCache(directory: cache, readOnly: true).entry(for: URLKey(parsing: server.url("/a.png")))?.sha256
                == sha256(new))

        // The lock file recipe: the restored cache holds exactly the pinned bytes.
        let offline = try await sdfetch(["--offline", lock])
        #expect(offline.status == 0)
        #expect(offline.standardOutput.hasPrefix("cached\t"))
        let missing = directory.write("url\tsha256\n\(server.url("/none.png"))\t\(sha256(new))\n", to: "missing.tsv")
        let offlineMiss = try await sdfetch(["--offline", missing])
        #expect(offlineMiss.status == 1)
        #expect(offlineMiss.standardError.contains("offline-miss"))
        #expect(server.requests(for: "/a.png") == 2)
    }

    @Test("two rows pinning one URL to different hashes: the later row is invalid")
    func conflictingPins() async throws {
        let server = try await LoopbackServer()
        let image = SampleImages.png(seed: 1)
        server.route("/a.png", .ok(image))
        let list = directory.write(
            "url,sha256\n\(server.url("/a.png")),\(sha256(image))\n\(server.url("/a.png")),\(sha256(image))\n"
                + "\(server.url("/a.png")),\(String(repeating: "0", count: 64))\n",
            to: "conflict.csv")
        let run = try await sdfetch(["--json", list])

        #expect(run.status == 1)
        let rows = bySource(try objects(run))
        #expect(rows["conflict.csv:2"]?["status"] as? String == "downloaded")
        #expect(rows["conflict.csv:3"]?["status"] as? String == "downloaded")
        #expect(rows["conflict.csv:4"]?["status"] as? String == "invalid")
        #expect(rows["conflict.csv:4"]?["error"] as? String == "invalid-row")
        #expect(run.standardError.contains("\(list):4: pins another sha256 than an earlier row of this URL"))
        #expect(server.requests(for: "/a.png") == 1)
    }

    @Test("standard input is a table with --input-format, its URL in the column --url-column names")
    func standardInputTable() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        let run = try await sdfetch(
            ["--json", "--input-format", "csv", "--url-column", "link", "-"],
            input: "name,link\ncat,\(server.url("/a.png"))\n")

        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try objects(run).first)
        #expect(object["source"] as? String == "-:2")
        #expect(object["fields"] as? [String: String] == ["name": "cat"])
        let misspelt = try await sdfetch(["--input-format", "cvs", "-"], input: "")
        #expect(misspelt.status == 2)
        #expect(misspelt.standardError.contains("'cvs' is not one of lines, csv, tsv, jsonl"))
    }
}
