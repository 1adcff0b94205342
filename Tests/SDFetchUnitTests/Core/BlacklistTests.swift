import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The failed-URL blacklist on its own: which kinds it records, persistence, expiry.
@Suite("Failed-URL blacklist", .cleansUp)
struct BlacklistTests {
    let directory = TemporaryDirectory("blacklist")
    let clock = ManualClock()
    let cache: DiskCache
    let blacklist: FailureBlacklist

    init() throws {
        cache = try DiskCache(directory: directory.appending("cache"), now: clock.read)
        blacklist = FailureBlacklist(cache: cache)
    }

    /// Every kind of the spec (and the internal ones) with the side of the line it belongs on.
    static let kinds: [(FetchFailure.Kind, Bool)] = [
        (.http(400), true), (.http(401), true), (.http(403), true), (.http(404), true), (.http(410), true),
        (.http(451), true), (.http(499), true),
        (.http(408), false), (.http(425), false), (.http(429), false),
        (.http(500), false), (.http(502), false), (.http(503), false), (.http(599), false), (.http(304), false),
        (.notAnImage, true), (.corruptImage, true), (.tooLarge, true), (.tooManyPixels, true),
        (.tooManyRedirects, true), (.badRedirect, true),
        (.timeout, false), (.connect, false), (.dns, false), (.tls, false), (.truncated, false),
        (.hostDown, false), (.offlineMiss, false), (.io, false), (.invalidURL, false), (.interrupted, false),
    ]

    @Test("each error kind lands on its side of the permanent/transient line", arguments: kinds)
    func permanence(kind: FetchFailure.Kind, permanent: Bool) throws {
        #expect(kind.isPermanent == permanent, "\(kind.label)")
        let key = try URLKey(parsing: "http://example.test/\(kind.label)")
        #expect(blacklist.insert(FetchFailure(kind, "detail"), for: key) == permanent)
        #expect((blacklist.record(for: key) != nil) == permanent)
        if permanent { #expect(blacklist.record(for: key)?.kind == kind) }
    }

    @Test("a record keeps url, kind, detail and time across instances")
    func persistence() throws {
        let key = try URLKey(parsing: "HTTP://Example.test:80/a.png#x")
        blacklist.insert(FetchFailure(.notAnImage, "no known image signature"), for: key)
        let reopened = FailureBlacklist(cache: try DiskCache(directory: cache.directory))
        let record = try #require(reopened.record(for: key))
        #expect(
            record
                == FailureRecord(
                    url: "http://example.test/a.png", kind: .notAnImage,
                    detail: "no known image signature", recordedAt: clock.now))
        #expect(reopened.list() == [record])
    }

    @Test("a record is active until max-age, and clean removes it afterwards")
    func expiry() throws {
        let key = try URLKey(parsing: "http://example.test/gone")
        blacklist.insert(FetchFailure(.http(404), "server answered 404"), for: key)
        let week: Duration = .seconds(7 * 86400)
        clock.advance(by: .seconds(7 * 86400 - 1))
        #expect(try #require(blacklist.record(for: key)).isActive(now: clock.now, maxAge: week))
        #expect(try cache.clean(maxAge: week, maxSize: nil, dryRun: false).removedFailed == 0)
        clock.advance(by: .seconds(1))
        #expect(try #require(blacklist.record(for: key)).isActive(now: clock.now, maxAge: week) == false)
        #expect(try cache.clean(maxAge: week, maxSize: nil, dryRun: true).removedFailed == 1)
        #expect(blacklist.record(for: key) != nil)
        #expect(try cache.clean(maxAge: week, maxSize: nil, dryRun: false).removedFailed == 1)
        #expect(blacklist.record(for: key) == nil)
    }

    @Test("remove counts the records that existed, clear removes all")
    func removeAndClear() throws {
        let keys = try (0..<4).map { try URLKey(parsing: "http://example.test/\($0)") }
        for key in keys { blacklist.insert(FetchFailure(.http(403), "server answered 403"), for: key) }
        #expect(blacklist.remove([keys[0], keys[0], try URLKey(parsing: "http://example.test/none")]) == 1)
        #expect(blacklist.list().count == 3)
        #expect(blacklist.clear() == 3)
        #expect(blacklist.list().isEmpty)
        #expect(blacklist.clear() == 0)
    }

    @Test("a damaged record file reads as no record")
    func damagedRecord() throws {
        let key = try URLKey(parsing: "http://example.test/a")
        blacklist.insert(FetchFailure(.http(404), "server answered 404"), for: key)
        let path = cache.directory + "/failed/" + String(key.digest.hex.prefix(2)) + "/" + key.digest.hex
        try Data("sdfetch-failure 1\nhttp://example.test/a\n12\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(blacklist.record(for: key) == nil)
        #expect(blacklist.list().isEmpty)
    }
}
