import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// `kill -9` of a run writing into `-o DIR`: DIR is the user's folder, so no half-written
/// file may appear there under any name, and what a killed run leaves (a temporary name
/// held between two system calls) is removed by the next run into DIR, and nothing else.
@Suite("kill -9 with -o DIR", .cleansUp, .timeLimit(.minutes(2)))
struct OutputKillTests {
    let directory = TemporaryDirectory("okill")
    var output: String { directory.appending("out") }

    /// Two megabytes per image (stored deflate blocks), so copying one is most of a warm
    /// run's time for it and a kill often lands during a copy.
    static func body(_ index: Int) -> [UInt8] { SampleImages.png(width: 724, height: 724, seed: index) }

    /// Output files a run has replaced since ``makeOutputsStale()``: they have the cache
    /// file's mtime again.
    private static func replacedCount(in output: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
        return names.filter { name in
            var info = stat()
            return name.hasSuffix(".png") && stat(output + "/" + name, &info) == 0 && info.st_mtim.tv_sec != 1_000_000
        }.count
    }

    /// Every file under a name that is not a temporary one holds exactly one served body.
    private func expectOnlyWholeFiles(_ bodies: Set<Data>, _ round: Int) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: output) where name.hasSuffix(".png") {
            let data = FileManager.default.contents(atPath: output + "/" + name) ?? Data()
            #expect(bodies.contains(data), "round \(round): \(name) holds \(data.count) bytes that no URL served")
        }
    }

    /// Gives every output file another mtime, so the next run replaces each (a user who
    /// edited or touched them): the path that needs a temporary name.
    private func makeOutputsStale() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: output) where name.hasSuffix(".png") {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: output + "/" + name)
        }
    }

    /// A process id that no longer exists: that of a child that has exited.
    private func deadProcessID() async throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = ["--version"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        await process.exited()
        return process.processIdentifier
    }

    @Test("kill -9 while output files are replaced leaves no half-written file; the next run removes what it left")
    func killWhileReplacing() async throws {
        let server = try await LoopbackServer()
        let paths = (0..<40).map { "/k/\($0).png" }
        for (index, path) in paths.enumerated() { server.route(path, .ok(Self.body(index))) }
        let bodies = Set((0..<40).map { Data(Self.body($0)) })
        let list = directory.write(paths.map { server.url($0) }.joined(separator: "\n"), to: "list.txt")
        let arguments = ["--cache-dir", directory.appending("cache"), "-o", output, "-q", list]
        #expect(try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments).status == 0)

        for round in 0..<8 {
            try makeOutputsStale()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
            process.arguments = arguments
            process.environment = ChildEnvironment.with(["HOME": directory.path])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Killed at a different point each round, once a few files were replaced; watched
            // from a thread of its own, as a warm run of 40 files is over in moments.
            let (pid, output, replaced) = (process.processIdentifier, output, 1 + round * 4)
            await onOwnThread {
                let deadline = ContinuousClock.now + .seconds(30)
                while Self.replacedCount(in: output) < replaced, ContinuousClock.now < deadline { usleep(200) }
                kill(pid, SIGKILL)
            }
            await process.exited()
            try expectOnlyWholeFiles(bodies, round)
        }

        // What other programs and the user keep in DIR stays, and so do a live process's
        // temporary names; a dead one's go (as a kill at the wrong instant leaves them).
        let dead = try await deadProcessID()
        let planted = [
            ".sdfetch-\(dead)-42.tmp": false, ".sdfetch-notes.tmp": true, ".sdfetch-\(dead).tmp": true,
            "\(dead)-42.tmp": true, ".sdfetch-\(getpid())-42.tmp": true,
        ]
        for name in planted.keys { _ = directory.write("half", to: "out/" + name) }
        let last = try await ProcessRun.launch(BuiltProduct.path("sdfetch"), arguments)
        try await server.shutdown()

        #expect(last.status == 0)
        try expectOnlyWholeFiles(bodies, 6)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: output))
        let images = names.filter { $0.hasSuffix(".png") }
        #expect(images.count == 40)
        #expect(names.subtracting(images) == Set(planted.filter(\.value).keys))
    }
}
