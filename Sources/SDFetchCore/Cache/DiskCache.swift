import Foundation

/// The on-disk image cache shared by every `sdfetch` process using one directory.
///
/// Layout: `entries/ab/cd/<digest>` holds the body and `<digest>.meta` its JSON
/// ``CacheEntry``; `tmp/` holds writes in progress. The body is renamed into place
/// before its metadata, so a visible `.meta` always describes a complete body.
/// Thread-safe: it keeps no mutable state; the file system is the state.
public final class DiskCache: Sendable {
    public let directory: String
    let entriesDirectory: String
    let temporaryDirectory: String
    let now: @Sendable () -> Date

    /// Opens (creating if needed) the cache at `directory`.
    ///
    /// - Throws: ``CacheError`` when the directory cannot be created or written.
    public init(directory: String, now: @escaping @Sendable () -> Date = Date.init) throws(CacheError) {
        self.directory = directory
        self.entriesDirectory = directory + "/entries"
        self.temporaryDirectory = directory + "/tmp"
        self.now = now
        for path in [directory, entriesDirectory, temporaryDirectory] {
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw CacheError(path: directory, detail: "cannot create \(path): \(errnoText())")
            }
        }
        guard access(temporaryDirectory, W_OK) == 0 else {
            throw CacheError(path: directory, detail: "not writable: \(errnoText())")
        }
    }

    /// Path of the body file for `key`, whether or not it exists.
    public func bodyPath(for key: URLKey) -> String {
        let hex = key.digest.hex
        let utf8 = Array(hex.utf8)
        let first = String(decoding: utf8[0..<2], as: UTF8.self)
        let second = String(decoding: utf8[2..<4], as: UTF8.self)
        return "\(entriesDirectory)/\(first)/\(second)/\(hex)"
    }

    func metadataPath(for key: URLKey) -> String { bodyPath(for: key) + ".meta" }

    /// The entry for `key`, fresh or stale, or nil when there is none (or it is unreadable).
    public func entry(for key: URLKey) -> CacheEntry? {
        guard let data = FileManager.default.contents(atPath: metadataPath(for: key)),
            let entry = try? JSONDecoder().decode(CacheEntry.self, from: data),
            entry.url == key.string
        else { return nil }
        return entry
    }

    /// Stores `body` with its metadata atomically and returns the new entry.
    @discardableResult
    public func store(
        _ body: [UInt8], for key: URLKey, image: VerifiedImage, etag: String?, lastModified: String?
    ) throws(FetchFailure) -> CacheEntry {
        let path = bodyPath(for: key)
        try makeParentDirectories(of: path)
        let date = now()
        let entry = CacheEntry(
            url: key.string, storedAt: date, accessedAt: date, etag: etag, lastModified: lastModified,
            format: image.format, bytes: Int64(body.count), width: image.width, height: image.height)
        try AtomicWrite.write(body, to: path, temporaryDirectory: temporaryDirectory)
        try writeMetadata(entry, for: key)
        return entry
    }

    func writeMetadata(_ entry: CacheEntry, for key: URLKey) throws(FetchFailure) {
        let data: Data
        do {
            data = try JSONEncoder().encode(entry)
        } catch {
            preconditionFailure("CacheEntry always encodes: \(error)")
        }
        try AtomicWrite.write(Array(data), to: metadataPath(for: key), temporaryDirectory: temporaryDirectory)
    }

    private func makeParentDirectories(of path: String) throws(FetchFailure) {
        let parent = (path as NSString).deletingLastPathComponent
        let grandparent = (parent as NSString).deletingLastPathComponent
        for directory in [grandparent, parent] where mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw FetchFailure(.io, "cannot create \(directory): \(errnoText())")
        }
    }
}
