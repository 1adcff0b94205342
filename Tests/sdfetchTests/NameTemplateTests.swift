import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

@testable import sdfetch

/// `--name TEMPLATE`: fields, safety of every part, no two URLs on one name, same names on re-runs.
@Suite("--name templates", .cleansUp, .timeLimit(.minutes(1)))
struct NameTemplateTests {
    let directory = TemporaryDirectory("names")

    private func render(_ template: String, _ url: String, _ format: ImageFormat? = .png) throws -> String {
        try NameTemplate(parsing: template).render(try URLKey(parsing: url), format: format)
    }

    @Test("fields render from the URL; a template without {hash} gets one before its extension")
    func fields() throws {
        let hash = String(try URLKey(parsing: "http://Example.org:8080/a/b/x.JPEG?q=1").digest.hex.prefix(8))
        #expect(
            try render("{host}/{path}/{stem}-{hash}{ext}", "http://Example.org:8080/a/b/x.JPEG?q=1", .jpeg)
                == "example.org/a/b/x-\(hash).jpg")
        #expect(
            try render("{host}/{path}/{stem}{ext}", "http://Example.org:8080/a/b/x.JPEG?q=1", .jpeg)
                == "example.org/a/b/x-\(hash).jpg")
        #expect(try render("{stem}", "http://h/x.png").hasPrefix("x-"))
        #expect(
            NameTemplate.standard.render(try URLKey(parsing: "http://h/a/x.png"), format: .png)
                == OutputNamer.name(for: try URLKey(parsing: "http://h/a/x.png"), format: .png))
    }

    @Test(
        "hostile paths stay inside DIR: dot segments, encoded slashes, long names",
        arguments: [
            "http://h/../../etc/x.png", "http://h/%2e%2e/%2e%2e/x.png", "http://h/a%2f..%2f..%2fescape/x.png",
            "http://h/.hidden/.x.png", "http://h/" + String(repeating: "y", count: 400) + "/x.png",
        ])
    func hostilePaths(url: String) throws {
        let path = try render("{host}/{path}/{stem}{ext}", url)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        #expect(parts.allSatisfy { !$0.isEmpty && !$0.hasPrefix(".") && $0.utf8.count <= OutputNamer.maxBytes })
        #expect(!parts.contains { $0.contains("\\") || $0.unicodeScalars.contains { Escaping.isUnsafe($0) } })
    }

    @Test(
        "bad templates are usage errors naming the problem",
        arguments: [
            ("{nope}", "unknown field {nope}"), ("a/{path}x/{stem}", "{path} must be a part of its own"),
            ("{stem", "without '}'"), ("/", "names no file"), ("{host}/{path}", "names no file"),
        ])
    func badTemplates(template: String, message: String) {
        #expect {
            try NameTemplate(parsing: template)
        } throws: { ($0 as? UsageError)?.message.contains(message) == true }
    }

    @Test("a wget -x style mirror: folders per host and path, distinct files, nothing outside DIR, same names again")
    func mirror() async throws {
        let server = try await LoopbackServer()
        let paths = ["/a/x.png", "/b/x.png", "/a/x.png?v=2", "/%2e%2e/%2e%2e/x.png", "/a//c/y.png", "/"]
        for (index, path) in paths.enumerated() { server.route(path, .ok(SampleImages.png(seed: index))) }
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "l")
        let output = directory.appending("sub/out")
        let arguments = [
            "--no-config", "--cache-dir", directory.appending("cache"), "-o", output, "--name",
            "{host}/{path}/{stem}{ext}", list,
        ]
        let first = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let firstFiles = try FileManager.default.subpathsOfDirectory(atPath: output).sorted()
        let second = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        let secondFiles = try FileManager.default.subpathsOfDirectory(atPath: output).sorted()

        #expect(first.status == 0 && second.status == 0, "\(first.standardError)")
        #expect(firstFiles == secondFiles)
        let files = firstFiles.filter { $0.hasSuffix(".png") }
        #expect(files.count == paths.count)
        #expect(files.allSatisfy { $0.hasPrefix("127.0.0.1/") })
        #expect(files.contains { $0.hasPrefix("127.0.0.1/a/x-") } && files.contains { $0.hasPrefix("127.0.0.1/b/x-") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("sub")) == ["out"])
        for (index, path) in paths.enumerated() {
            let line = try #require(
                first.standardOutput.split(separator: "\n").first { $0.hasSuffix("\t" + server.url(path)) })
            let file = String(line.split(separator: "\t")[1])
            #expect(file.hasPrefix(output + "/127.0.0.1/"))
            #expect(FileManager.default.contents(atPath: file) == Data(SampleImages.png(seed: index)))
        }
    }
}
