import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// No fetch ever waits for maintenance (OnDiskFormat.md, "Locks"): a lock of the cache held
/// by a process stopped with SIGSTOP (a `clean` suspended by its shell) does not keep a
/// fetch from finishing. What is asserted is that the fetch exits at all, within seconds.
@Suite("No fetch waits for maintenance", .cleansUp, .timeLimit(.minutes(1)))
struct MaintenanceWaitTests {
    let directory = TemporaryDirectory("lockwait")

    private var cachePath: String { directory.appending("cache") }

    /// `flock --no-fork` (util-linux) holding `locks/NAME` of the cache in the very process
    /// that then sleeps, stopped once it holds the lock: kill it by PID (``release(_:)``).
    private func stoppedHolder(of name: String) async throws -> Process {
        try FileManager.default.createDirectory(atPath: cachePath + "/locks", withIntermediateDirectories: true)
        let path = cachePath + "/locks/" + name
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        process.arguments = ["--no-fork", path, "sleep", "120"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(await onOwnThread { Self.waitUntilHeld(path) }, "the child holds the lock")
        kill(process.processIdentifier, SIGSTOP)
        return process
    }

    /// Whether `path` becomes locked by another process within a few seconds.
    private static func waitUntilHeld(_ path: String) -> Bool {
        for _ in 0..<500 {
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                close(fd)  // lets go of the lock when this test took it
                if !free { return true }
            }
            usleep(10_000)
        }
        return false
    }

    /// Runs sdfetch and returns its exit status and standard error, or nil (and ends it)
    /// when it has not exited within `limit` seconds.
    private func run(_ arguments: [String], limit: Double = 20) async throws -> (status: Int32, stderr: String)? {
        let errors = directory.appending("stderr-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: errors, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProduct.path("sdfetch"))
        process.arguments = arguments
        // A stuck holder is waited out for 0.2 s, not 2 (the debug build's ShortWaits).
        process.environment = ChildEnvironment.with(["HOME": directory.path, "SDFETCH_TEST_SHORT_WAITS": "1"])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            await process.exited()
            return nil
        }
        await process.exited()
        return (process.terminationStatus, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    private func release(_ holder: Process) async {
        kill(holder.processIdentifier, SIGKILL)
        await holder.exited()
    }

    /// A server of `count` images and the list file naming them.
    private func serve(_ count: Int) async throws -> (LoopbackServer, String, [String]) {
        let server = try await LoopbackServer()
        var urls: [String] = []
        for index in 0..<count {
            server.route("/w/\(index).png", .ok(SampleImages.png(seed: index)))
            urls.append(server.url("/w/\(index).png"))
        }
        return (server, directory.write(urls.joined(separator: "\n") + "\n", to: "urls.txt"), urls)
    }

    @Test(
        "a fetch that stored new entries finishes while the maintenance lock is held by a stopped process, and -v says the trim was left"
    )
    func trimDoesNotWaitForMaintenance() async throws {
        let (server, list, _) = try await serve(3)
        let holder = try await stoppedHolder(of: "maintenance")
        let result = try await run(["-v", "--cache-dir", cachePath, "--max-cache-size", "1G", list])
        await release(holder)
        let finished = try #require(result, "the fetch did not exit within 20 s")
        #expect(finished.status == 0)
        #expect(finished.stderr.contains("cache trim left for the next run"), "\(finished.stderr)")
        #expect(try DiskCache.stats(directory: cachePath).entries == 3)
        try await server.shutdown()
    }

    @Test("a fetch that replaces an entry finishes while its bucket's lock is held by a stopped process")
    func replaceDoesNotWaitForStoppedHolder() async throws {
        let (server, list, urls) = try await serve(1)
        let first = try #require(try await run(["--cache-dir", cachePath, list]))
        #expect(first.status == 0)
        // The entry's bucket: the folder its file is in.
        let key = try URLKey(parsing: urls[0])
        let cache = try DiskCache(directory: cachePath)
        let bucket = URL(fileURLWithPath: cache.bodyPath(for: key)).deletingLastPathComponent().lastPathComponent
        let before = try #require(cache.entry(for: key))
        let holder = try await stoppedHolder(of: bucket)
        // No validators and --max-age 0: downloaded again, and the entry's file replaced.
        let result = try await run(["--cache-dir", cachePath, "--max-age", "0", list])
        await release(holder)
        let finished = try #require(result, "the fetch did not exit within 20 s")
        #expect(finished.status == 0, "\(finished.stderr)")
        let after = try #require(try DiskCache(directory: cachePath).entry(for: key))
        #expect(after.storedAt >= before.storedAt)
        #expect(server.requests(for: "/w/0.png") == 2)
        try await server.shutdown()
    }
}
