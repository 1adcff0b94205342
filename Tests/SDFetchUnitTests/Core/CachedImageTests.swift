import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// ``DiskCache/openImage(for:)``: the one way out of the cache for an image's bytes (`-o`).
@Suite("Opening a cached image", .cleansUp)
struct CachedImageTests {
    let directory = TemporaryDirectory("image")

    private func stored(_ cache: DiskCache, _ body: [UInt8]) throws -> URLKey {
        let key = try URLKey(parsing: "http://example.test/a.png")
        let image = VerifiedImage(format: .png, width: 4, height: 4)
        try cache.store(body, for: key, image: image, etag: nil, lastModified: nil)
        return key
    }

    @Test("an entry's image opens with its bytes and stamp, and links as the image itself")
    func opensAndLinks() throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        let body = SampleImages.png(seed: 3)
        let key = try stored(cache, body)
        let entry = try #require(cache.entry(for: key))
        let image = try cache.openImage(for: key)
        let (bytes, stamp) = (image.bytes, Int64(image.modified.tv_sec))
        #expect(bytes == Int64(body.count))
        #expect(stamp == entry.stamp)
        var read = [UInt8](repeating: 0, count: body.count + 1)
        let count = pread(image.descriptor, &read, read.count, 0)
        #expect(count == body.count)
        #expect(Array(read.prefix(body.count)) == body)

        let folder = open(directory.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        let linked = image.link(as: "linked.png", in: folder)
        #expect(linked)
        #expect(FileManager.default.contents(atPath: directory.appending("linked.png")) == Data(body))
        let linkedAgain = image.link(as: "linked.png", in: folder)
        let failure = errno
        #expect(!linkedAgain && failure == EEXIST)
    }

    @Test("a key without an entry, or whose file was replaced by a link, does not open")
    func refusesMissingAndLinks() throws {
        let cache = try DiskCache(directory: directory.appending("cache"))
        let absent = try URLKey(parsing: "http://example.test/none.png")
        #expect(throws: CachedImage.Unreadable.self) { _ = try cache.openImage(for: absent) }
        let key = try stored(cache, SampleImages.png(seed: 4))
        let file = cache.bodyPath(for: key)
        let elsewhere = directory.write("not an image", to: "elsewhere")
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: elsewhere)
        #expect(throws: CachedImage.Unreadable.self) { _ = try cache.openImage(for: key) }
    }
}
