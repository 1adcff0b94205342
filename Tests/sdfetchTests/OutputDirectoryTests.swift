import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `-o DIR` with the built binary: safe, distinct, stable names, nothing outside DIR.
@Suite("sdfetch -o DIR, end to end", .cleansUp, .timeLimit(.minutes(1)))
struct OutputDirectoryTests {
    let directory = TemporaryDirectory("out")

    @Test("/a/x.png, /b/x.png, '..' and '%2f' segments get distinct safe names inside DIR, the same on re-run")
    func names() async throws {
        let server = try await LoopbackServer()
        let paths = ["/a/x.png", "/b/x.png", "/c/..", "/d/%2e%2e", "/e/..%2f..%2fescape.png", "/f/%2fetc%2fpasswd"]
        for (index, path) in paths.enumerated() { server.route(path, .ok(SampleImages.png(seed: index))) }
        // The request path is the key's, byte for byte: `/c/..` must reach the server as sent.
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let output = directory.appending("sub/images")
        let arguments = ["--cache-dir", directory.appending("cache"), "-o", output, list]
        let first = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let firstNames = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        let second = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let secondNames = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        let dotSegmentRequests = server.requests(for: "/c/..")

        #expect(first.status == 0 && second.status == 0)
        #expect(dotSegmentRequests == 1)
        #expect(firstNames.count == paths.count)
        #expect(firstNames == secondNames)
        #expect(firstNames.allSatisfy { !$0.hasPrefix(".") && $0.hasSuffix(".png") && $0.utf8.count <= 200 })
        #expect(firstNames.filter { $0.hasPrefix("x-") }.count == 2)
        #expect(firstNames.filter { $0.hasPrefix("image-") }.count == 2)
        // Nothing escaped DIR: its parent holds only DIR itself.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("sub")) == ["images"])
        let printed = first.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
        #expect(Set(printed) == Set(firstNames.map { output + "/" + $0 }))
        for (index, path) in paths.enumerated() {
            let line = try #require(
                first.standardOutput.split(separator: "\n").first { $0.hasSuffix(server.url(path)) })
            let file = String(line.split(separator: "\t")[1])
            #expect(FileManager.default.contents(atPath: file) == Data(SampleImages.png(seed: index)))
        }
    }

    @Test("-o copies by default: editing the output never touches the cache, and a hit leaves the output's mtime")
    func copiesByDefault() async throws {
        let server = try await LoopbackServer()
        server.route("/x.png", .ok(SampleImages.png()))
        let list = directory.write(server.url("/x.png"), to: "l")
        let cache = directory.appending("cache")
        let output = directory.appending("out")
        let arguments = ["--cache-dir", cache, "-o", output, "--json", list]
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let cached = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["path", "--cache-dir", cache, server.url("/x.png")])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let placed = try #require(object["path"] as? String)
        #expect(placed.hasPrefix(output + "/x-"))
        let cacheFile = cached.standardOutput.trimmingCharacters(in: .newlines)
        var a = stat()
        var b = stat()
        #expect(stat(placed, &a) == 0 && stat(cacheFile, &b) == 0)
        #expect(a.st_ino != b.st_ino)
        // A re-run is a hit: the output file is left exactly as it is.
        let again = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        var c = stat()
        #expect(again.standardOutput.contains("\"cached\"") && stat(placed, &c) == 0)
        #expect(c.st_ino == a.st_ino && c.st_mtim.tv_sec == a.st_mtim.tv_sec && c.st_mtim.tv_nsec == a.st_mtim.tv_nsec)
        // Editing the output leaves the cache's entry intact and served.
        try Data("edited".utf8).write(to: URL(fileURLWithPath: placed))
        let second = directory.appending("out2")
        let third = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--cache-dir", cache, "-o", second, "--json", list])
        // The edited output itself is rewritten whole from the cache on the next run into it.
        let fourth = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        #expect(fourth.status == 0 && FileManager.default.contents(atPath: placed) == Data(SampleImages.png()))
        #expect(third.standardOutput.contains("\"cached\"") && server.requests(for: "/x.png") == 1)
        #expect(FileManager.default.contents(atPath: cacheFile) == Data(SampleImages.png()))
        let copies = try FileManager.default.contentsOfDirectory(atPath: second)
        #expect(
            copies.count == 1
                && FileManager.default.contents(atPath: second + "/" + copies[0]) == Data(SampleImages.png()))
    }

    @Test("--link hard-links, and an entry edited through the link is not served again")
    func hardLinkWhenAsked() async throws {
        let server = try await LoopbackServer()
        server.route("/x.png", .ok(SampleImages.png(seed: 1)), .ok(SampleImages.png(seed: 1)))
        let list = directory.write(server.url("/x.png"), to: "l")
        let cache = directory.appending("cache")
        let output = directory.appending("out")
        let run = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--cache-dir", cache, "-o", output, "--link", "--json", list])
        let cached = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["path", "--cache-dir", cache, server.url("/x.png")])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let placed = try #require(object["path"] as? String)
        let cacheFile = cached.standardOutput.trimmingCharacters(in: .newlines)
        var a = stat()
        var b = stat()
        #expect(stat(placed, &a) == 0 && stat(cacheFile, &b) == 0 && a.st_ino == b.st_ino)
        // The case: six bytes written through the link change the entry in place.
        try Data("edited".utf8).write(to: URL(fileURLWithPath: placed))
        let again = try await ProcessRun.launch(
            BuiltProduct.path("sdfetch"), ["--cache-dir", cache, "-o", directory.appending("out2"), "--json", list])
        #expect(again.standardOutput.contains("\"downloaded\""))
        #expect(server.requests(for: "/x.png") == 2)
    }

    @Test("a symlink or a stale file at an output name is replaced, never followed or written through")
    func plantedFiles() async throws {
        let server = try await LoopbackServer()
        server.route("/a.png", .ok(SampleImages.png(seed: 1)))
        server.route("/b.png", .ok(SampleImages.png(seed: 2)))
        let list = directory.write([server.url("/a.png"), server.url("/b.png")].joined(separator: "\n"), to: "l")
        let output = directory.appending("out")
        let arguments = ["--cache-dir", directory.appending("cache"), "-o", output, list]
        let first = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let names = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        // Between runs: a symlink to a file outside DIR at one name, other bytes at the other.
        let outside = directory.write("do not touch", to: "outside.txt")
        unlink(output + "/" + names[0])
        symlink(outside, output + "/" + names[0])
        unlink(output + "/" + names[1])
        _ = directory.write("stale", to: "out/" + names[1])
        let second = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)

        #expect(first.status == 0 && second.status == 0)
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "do not touch")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).sorted() == names)
        for (name, seed) in zip(names, [1, 2]) {
            var info = stat()
            #expect(lstat(output + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
            #expect(FileManager.default.contents(atPath: output + "/" + name) == Data(SampleImages.png(seed: seed)))
        }
    }
}
