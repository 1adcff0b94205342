import SDFetchCore

/// `-o DIR` as the last step of each result (``ResultDelivery``): places a successful
/// result's image under its ``NameTemplate`` name, and reports the placed file as the
/// result's path. A copy that cannot be written turns the result `failed` (`io`), before
/// the run counts it; with `--resize`, so does an image that cannot be resized
/// (`corrupt-image`, `too-many-pixels`: its cached original stays, and is not blacklisted).
struct OutputDelivery: ResultDelivery {
    let placer: OutputPlacer
    /// Where the image comes from: ``DiskCache/openImage(for:)``, never a path.
    let cache: DiskCache
    /// `-o FILE` for a single URL: the one name in DIR (the file's folder); nil: each
    /// image's ``NameTemplate`` name.
    var fixedName: String? = nil
    /// `--resize`: each file a resized copy of the cached original, made on `pool`
    /// (`sdfetch-resize`, a thread per core): a decode is up to seconds of CPU and may wait
    /// for its pixel budget, so never on the cooperative pool. Nil: the original.
    var resizing: (resizer: ImageResizer, pool: BlockingPool)?
    /// `-v`: says for each resized copy whether it was made or found already made.
    var notes: (@Sendable (FetchNote) -> Void)? = nil

    func deliver(_ result: inout FetchResult) async {
        guard let key = result.key, result.status.isSuccess else { return }
        let held = result.heldImage
        do throws(OutputError) {
            if let resizing {
                result.path = try await placeResized(key, resizing, held: held, result: &result)
                return
            }
            // A hit whose output file still has the entry's size and stamp is left alone.
            let placed = result.fileStamp.map { (bytes: result.bytes, stamp: $0) }
            result.path = try placer.place(
                at: fixedName ?? placer.template.render(key, format: result.format),
                placed: result.status == .downloaded ? nil : placed
            ) { () throws(CachedImage.Unreadable) in
                // A file held since its check (a 304's, a pinned hit's) is the one to deliver.
                if let image = held?.opened() { return image }
                return try cache.openImage(for: key)
            }
        } catch {
            result.failDelivery(FetchFailure(.io, error.detail), entryWasRemoved: error.isEntryGone)
        }
    }

    /// Reads the cached original, resizes it and writes the copy under the name of its new
    /// format; nil, with the result failed, when the image cannot be resized. A file already
    /// at that name whose mark names these options and this original is the copy: kept,
    /// nothing read or decoded.
    private func placeResized(
        _ key: URLKey, _ resizing: (resizer: ImageResizer, pool: BlockingPool), held: HeldImage?,
        result: inout FetchResult
    ) async throws(OutputError) -> String? {
        let name = fixedName ?? placer.template.render(key, format: resizing.resizer.options.format.imageFormat)
        if let digest = result.sha256, let existing = placer.existingFile(at: name, limit: Self.largestCopyRead),
            resizing.resizer.isCopy(existing.bytes, ofOriginal: digest)
        {
            notes?(FetchNote(url: result.url, message: "resized copy already made: \(existing.path)"))
            return existing.path
        }
        let original = try Self.original(of: key, held: held, in: cache)
        guard let copy = await Self.resized(original, resizing, result: &result) else { return nil }
        let path = try placer.write(copy.bytes, at: name)
        notes?(FetchNote(url: result.url, message: "resized copy made: \(path)"))
        return path
    }

    /// The largest file read to see whether it is the copy already: past it (a `none`-mode
    /// copy of a huge image) the copy is made again.
    static let largestCopyRead = 64 << 20

    /// `original` resized on the resize pool, marked with the original's SHA-256 when the
    /// result has it; nil, with `result` failed, when it cannot be (`corrupt-image`,
    /// `too-many-pixels`: the cached original stays, not blacklisted).
    static func resized(
        _ original: [UInt8], _ resizing: (resizer: ImageResizer, pool: BlockingPool), result: inout FetchResult
    ) async -> ResizedImage? {
        let digest = result.sha256
        let made = await resizing.pool.run {
            digest.map { resizing.resizer.resize(original, originalSHA256: $0) } ?? resizing.resizer.resize(original)
        }
        switch made {
        case .success(let copy): return copy
        case .failure(let failure):
            result.failDelivery(failure)
            return nil
        }
    }

    /// The cached original's bytes: the file held since its check (a 304's, a pinned
    /// hit's) when there is one, else the entry opened now.
    static func original(of key: URLKey, held: HeldImage?, in cache: DiskCache) throws(OutputError) -> [UInt8] {
        do throws(CachedImage.Unreadable) {
            if let image = held?.opened() { return try image.readAll() }
            return try cache.openImage(for: key).readAll()
        } catch {
            throw OutputError(detail: error.detail, isEntryGone: error.isGone)
        }
    }
}
