import Foundation
import Glibc
import SDFetchCore
import SDFetchTestSupport
import Synchronization
import Testing

/// `hosts/` in the cache directory (OnDiskFormat, "Host-down records"): what one run found
/// down, read by the next within `--host-down-for`; untrusted like every file there.
@Suite("Host-down memory", .cleansUp)
struct HostDownMemoryTests {
    let directory = TemporaryDirectory("host-memory")

    private func cache(now: Date = Date()) throws -> DiskCache {
        try DiskCache(directory: directory.appending("cache"), now: { now })
    }

    private var folder: String { directory.appending("cache/hosts") }

    @Test("a record is read back within its window, not after it, and not for another host's name")
    func readsWithinTheWindow() throws {
        let memory = HostDownMemory(cache: try cache())
        let now = Date()
        memory.remember(
            [
                DownHost(host: "gone.test", kind: .dns, cause: "its name does not resolve (x)"),
                DownHost(host: "silent.test:8080", kind: .timeout, cause: "no answer"),
                // A certificate that fails the check may be mended by `--cacert`: not remembered.
                DownHost(host: "untrusted.test", kind: .tls, cause: "certificate"),
            ], at: now.addingTimeInterval(-600))

        let active = memory.active(now: now, within: .seconds(3600)).sorted { $0.host < $1.host }
        #expect(active.map(\.host) == ["gone.test", "silent.test:8080"])
        #expect(active.map(\.kind) == [.dns, .timeout])
        #expect(memory.active(now: now, within: .seconds(300)).isEmpty)

        // A record copied under another host's name is no record for either.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files.count == 2)
        try FileManager.default.removeItem(atPath: "\(folder)/\(files[0])")
        try FileManager.default.copyItem(atPath: "\(folder)/\(files[1])", toPath: "\(folder)/\(files[0])")
        #expect(memory.active(now: now, within: .seconds(3600)).count == 1)
    }

    @Test("damaged, oversized, linked and future records are no records")
    func untrustedFilesAreIgnored() throws {
        let memory = HostDownMemory(cache: try cache())
        let now = Date()
        memory.remember([DownHost(host: "silent.test", kind: .timeout, cause: "no answer")], at: now)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first)
        let good = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)"))
        let digestLike = String(repeating: "ab", count: 16)
        // Truncated, then past the size any record has, then a link to the good one.
        try good.prefix(good.count - 4).write(
            to: URL(fileURLWithPath: "\(folder)/\(String(repeating: "cd", count: 16))"))
        try Data(repeating: 0x61, count: 1 << 20).write(to: URL(fileURLWithPath: "\(folder)/\(digestLike)"))
        try FileManager.default.createSymbolicLink(
            atPath: "\(folder)/\(String(repeating: "ef", count: 16))", withDestinationPath: "\(folder)/\(name)")
        #expect(memory.active(now: now, within: .seconds(3600)).map(\.host) == ["silent.test"])

        // A record dated an hour ahead is not believed.
        memory.remember([DownHost(host: "future.test", kind: .dns, cause: "x")], at: now.addingTimeInterval(3600))
        #expect(memory.active(now: now, within: .seconds(3600)).map(\.host) == ["silent.test"])
    }

    @Test("clean removes records older than a day and strays, and keeps younger ones")
    func cleanExpiresRecords() throws {
        let now = Date()
        let cache = try cache(now: now)
        let memory = HostDownMemory(cache: cache)
        memory.remember([DownHost(host: "old.test", kind: .dns, cause: "x")], at: now.addingTimeInterval(-2 * 86_400))
        memory.remember([DownHost(host: "new.test", kind: .timeout, cause: "y")], at: now.addingTimeInterval(-60))
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/link", withDestinationPath: "/etc/passwd")

        #expect(try cache.clean(maxAge: .seconds(7 * 86_400), maxSize: nil, dryRun: true).removedHosts == 2)
        #expect(try cache.clean(maxAge: .seconds(7 * 86_400), maxSize: nil, dryRun: false).removedHosts == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 1)
        #expect(memory.active(now: now, within: .seconds(86_400)).map(\.host) == ["new.test"])
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
    }

    @Test("a fetcher starts with the remembered hosts down and dials none of them; --retry-failed dials")
    func fetcherSkipsRememberedHosts() async throws {
        let silent = try await RawResponseServer([.init("", after: .seconds(60))])
        let urls = (0..<3).map { silent.url("/\($0).png") }
        let host = "http://127.0.0.1:\(silent.port)"
        HostDownMemory(cache: try cache()).remember(
            [DownHost(host: host, kind: .timeout, cause: "no answer within the timeout after connecting")],
            at: Date().addingTimeInterval(-120))

        let fetcher = try Fetcher.forTesting(in: directory, { $0.timeout = .seconds(1) })
        for url in urls {
            let result = try await fetcher.fetch(url: url)
            #expect(result.failure?.kind == .hostDown)
            #expect(result.failure?.hostCause == .timeout)
            #expect(
                result.failure?.detail.contains("found down 2 min ago") == true, "\(String(describing: result.failure))"
            )
        }
        #expect(silent.connections == 0)

        let retrying = try Fetcher.forTesting(
            in: directory,
            {
                $0.timeout = .seconds(1)
                $0.retries = 0
                $0.retryFailed = true
            })
        let result = try await retrying.fetch(url: urls[0])
        #expect(result.failure?.kind == .timeout)
        #expect(silent.connections == 1)
    }

    @Test("a host that turned every connection away is remembered: a re-run neither dials it nor waits to retry")
    func refusingHostIsRemembered() async throws {
        // Reads each request, then closes without a byte: curl's "empty reply", `connect`.
        let closing = try await RawResponseServer([])
        let urls = (0..<2).map { closing.url("/\($0).png") }
        let first = try Fetcher.forTesting(in: directory)
        for url in urls { #expect(try await first.fetch(url: url).failure?.kind == .connect) }
        await first.shutdown()
        let dialled = closing.connections
        #expect(dialled == 6, "two URLs, three tries each")

        // The default backoff (0.5 s, then 1 s): a retry would show as a `-v` note.
        let notes = Mutex<[FetchNote]>([])
        let rerun = Fetcher(
            options: FetchOptions(), cache: try cache(), notes: { note in notes.withLock { $0.append(note) } })
        TestScope.onExit { await rerun.shutdown() }
        for url in urls {
            let result = try await rerun.fetch(url: url)
            #expect(result.failure?.kind == .hostDown)
            #expect(result.failure?.hostCause == .connect)
            let detail = result.failure?.detail ?? ""
            #expect(detail.contains("turned away 6 connections"), "\(detail)")
        }
        #expect(closing.connections == dialled)
        #expect(notes.withLock { $0 }.isEmpty)
    }

    @Test("one URL whose connections are reset on every try leaves its host unremembered; a second URL's does not")
    func oneResetURLIsNotTheHost() async throws {
        // Closes each connection without a byte: curl's "empty reply", `connect`, as a
        // firewall's rule about one path would.
        let closing = try await RawResponseServer([])
        let origin = "http://127.0.0.1:\(closing.port)"
        let first = try Fetcher.forTesting(in: directory)
        #expect(try await first.fetch(url: closing.url("/a.png")).failure?.kind == .connect)
        await first.shutdown()
        #expect(closing.connections == 3, "one URL, three tries")
        #expect(HostDownMemory(cache: try cache()).active(now: Date(), within: .seconds(3600)).isEmpty)

        let second = try Fetcher.forTesting(in: directory)
        for path in ["/a.png", "/b.png"] {
            #expect(try await second.fetch(url: closing.url(path)).failure?.kind == .connect)
        }
        await second.shutdown()
        let records = HostDownMemory(cache: try cache()).active(now: Date(), within: .seconds(3600))
        #expect(records.map(\.host) == [origin])
    }

    @Test("a port that refuses connections is remembered as its host turning them away")
    func refusedPortIsRemembered() async throws {
        let gone = try await RawResponseServer([])
        let url = gone.url("/a.png")
        try await gone.shutdown()
        let fetcher = try Fetcher.forTesting(in: directory)
        #expect(try await fetcher.fetch(url: url).failure?.kind == .connect)
        await fetcher.shutdown()

        let records = HostDownMemory(cache: try cache()).active(now: Date(), within: .seconds(3600))
        #expect(records.map(\.host) == ["http://127.0.0.1:\(gone.port)"])
        #expect(records.map(\.kind) == [.connect])
    }

    @Test("a record's cause is kept to 512 bytes; a longer one in a file is no record; 10,000 are read")
    func recordsAreBounded() async throws {
        let memory = HostDownMemory(cache: try cache())
        let now = Date()
        let long = String(repeating: "é", count: 2000)
        memory.remember([DownHost(host: "https://long.test", kind: .dns, cause: long)], at: now)
        let read = try #require(memory.active(now: now, within: .seconds(3600)).first)
        #expect(read.cause.utf8.count <= 512 && read.cause.hasPrefix("éé"))

        // A forged record with a 16 KiB cause, named as a real one would be.
        let time = Int64(now.timeIntervalSince1970) * 1_000_000_000
        let forged =
            Array("sdfetch-host-down 2\nhttps://forged.test\n\(time)\ntimeout\n".utf8)
            + Array(repeating: UInt8(ascii: "x"), count: 16_000) + Array("\nend\n".utf8)
        let name = KeyDigest(of: "https://forged.test").hex
        try Data(forged).write(to: URL(fileURLWithPath: "\(folder)/\(name)"))
        #expect(memory.active(now: now, within: .seconds(3600)).map(\.host) == ["https://long.test"])

        // Records past the most a run reads are not read.
        try FileManager.default.removeItem(atPath: "\(folder)/\(name)")
        // Ten thousand files: written and read on a thread of the test's own, not the pool's.
        let count = await onOwnThread {
            let many = (0..<10_050).map { DownHost(host: "https://h\($0).test", kind: .timeout, cause: "no answer") }
            memory.remember(many, at: now)
            return memory.active(now: now, within: .seconds(3600)).count
        }
        #expect(count == 10_000)
    }
}
