import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `--resize` run again over its own output with the built binary: the copies a folder
/// already holds are found by the mark inside each file and not made again; `-v` says
/// which copies were made (each one a decode) and which were found.
@Suite("sdfetch --resize run again: nothing made twice", .cleansUp, .timeLimit(.minutes(2)))
struct ResizedCopyRerunTests {
    let directory = TemporaryDirectory("rerun")
    let names = ["bands.jpg", "bands-alpha.png", "bands.gif", "bands.webp"]

    /// Runs with `-v -o out` and `options` over every fixture, and counts `-v`'s lines.
    private func run(
        _ out: String, _ options: [String], server: LoopbackServer
    ) async throws -> (made: Int, kept: Int) {
        for name in names { server.route("/" + name, .ok(ImageFixture.bytes(name))) }
        let list = directory.write(names.map { server.url("/" + $0) }.joined(separator: "\n"), to: "list")
        let run = try await ProcessRun.sdfetch(
            ["--cache-dir", directory.appending("cache"), "-v", "-o", directory.appending(out)] + options + [list])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardError.split(separator: "\n")
        return (
            lines.filter { $0.contains("resized copy made: ") }.count,
            lines.filter { $0.contains("resized copy already made: ") }.count
        )
    }

    private func files(_ out: String) throws -> [String: Data] {
        let folder = directory.appending(out)
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            contents[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return contents
    }

    @Test(
        "in each output format a second run decodes nothing and leaves every file as it was",
        arguments: ["jpeg", "png", "webp"])
    func secondRun(format: String) async throws {
        let server = try await LoopbackServer()
        let options = ["--resize", "48", "--resize-format", format]
        let first = try await run(format, options, server: server)
        let made = try files(format)
        let second = try await run(format, options, server: server)

        #expect(first.made == names.count && first.kept == 0)
        #expect(second.made == 0 && second.kept == names.count)
        #expect(try files(format) == made)
        // The mark leaves the copy a valid image of its format.
        for name in made.keys {
            let copy = try #require(ImageFixture.decode(file: directory.appending(format + "/" + name)))
            #expect(copy.format.name == format && max(copy.width, copy.height) == 48)
        }
    }

    @Test("a folder copied with a plain cp keeps its copies; a killed run's folder is finished, not redone")
    func copiedAndResumed() async throws {
        let server = try await LoopbackServer()
        _ = try await run("a", ["--resize", "40"], server: server)
        // Plain copies of the bytes: no extended attribute, no time stamp goes along.
        let copied = directory.appending("b")
        try FileManager.default.createDirectory(atPath: copied, withIntermediateDirectories: true)
        for (name, data) in try files("a") { try data.write(to: URL(fileURLWithPath: copied + "/" + name)) }
        // As a kill leaves it: one copy not made yet.
        let missing = try #require(try files("a").keys.sorted().first)
        try FileManager.default.removeItem(atPath: directory.appending("a/" + missing))

        let inCopy = try await run("b", ["--resize", "40"], server: server)
        let resumed = try await run("a", ["--resize", "40"], server: server)

        #expect(inCopy.made == 0 && inCopy.kept == names.count)
        #expect(resumed.made == 1 && resumed.kept == names.count - 1)
    }

    @Test("other options, another original or a changed file make the copy again")
    func neverStale() async throws {
        let server = try await LoopbackServer()
        _ = try await run("c", ["--resize", "40"], server: server)
        let others = [
            ["--resize", "41"], ["--resize", "40", "--resize-quality", "60"],
            ["--resize", "40", "--resize-background", "#000000"], ["--resize", "40", "--resize-mode", "crop"],
        ]
        for option in others {
            let other = try await run("c-" + option.joined(), option, server: server)
            let again = try await run("c", option, server: server)
            #expect(other.made == names.count)
            #expect(again.made == names.count, "\(option) took copies made with other options")
            _ = try await run("c", ["--resize", "40"], server: server)
        }
        // One byte of one copy's pixels changed, its mark kept: made again, the others kept.
        let name = try #require(try files("c").keys.sorted().first)
        let path = directory.appending("c/" + name)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 40] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let afterEdit = try await run("c", ["--resize", "40"], server: server)
        #expect(afterEdit.made == 1 && afterEdit.kept == names.count - 1)
        // The same name for another image: the bands served as the alpha bands' URL.
        server.route("/bands-alpha.png", .ok(ImageFixture.bytes("bands.jpg")))
        let list = directory.write(server.url("/bands-alpha.png"), to: "one")
        let refetched = try await ProcessRun.sdfetch(
            [
                "--cache-dir", directory.appending("cache"), "--refresh", "-v", "-o", directory.appending("c"),
                "--resize", "40", list,
            ])
        #expect(refetched.standardError.contains("resized copy made: "), "\(refetched.standardError)")
    }
}
