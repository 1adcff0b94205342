import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `-o DIR` with the built binary: safe, distinct, stable names, nothing outside DIR.
@Suite("sdfetch -o DIR, end to end", .timeLimit(.minutes(1)))
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
        try await server.shutdown()

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
            let line = try #require(first.standardOutput.split(separator: "\n").first { $0.hasSuffix(server.url(path)) })
            let file = String(line.split(separator: "\t")[1])
            #expect(FileManager.default.contents(atPath: file) == Data(SampleImages.png(seed: index)))
        }
        directory.remove()
    }

    @Test("an -o file shares the cache file's inode on the same file system")
    func hardLink() async throws {
        let server = try await LoopbackServer()
        server.route("/x.png", .ok(SampleImages.png()))
        let list = directory.write(server.url("/x.png"), to: "l")
        let cache = directory.appending("cache")
        let output = directory.appending("out")
        let run = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["--cache-dir", cache, "-o", output, "--json", list])
        let cached = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), ["path", "--cache-dir", cache, server.url("/x.png")])
        try await server.shutdown()

        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let placed = try #require(object["path"] as? String)
        #expect(placed.hasPrefix(output + "/x-"))
        let cacheFile = cached.standardOutput.trimmingCharacters(in: .newlines)
        var a = stat()
        var b = stat()
        #expect(stat(placed, &a) == 0 && stat(cacheFile, &b) == 0)
        #expect(a.st_ino == b.st_ino)
        directory.remove()
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
        try await server.shutdown()

        #expect(first.status == 0 && second.status == 0)
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "do not touch")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).sorted() == names)
        for (name, seed) in zip(names, [1, 2]) {
            var info = stat()
            #expect(lstat(output + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
            #expect(FileManager.default.contents(atPath: output + "/" + name) == Data(SampleImages.png(seed: seed)))
        }
        directory.remove()
    }
}
