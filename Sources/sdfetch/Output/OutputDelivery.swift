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
    /// format; nil, with the result failed, when the image cannot be resized.
    private func placeResized(
        _ key: URLKey, _ resizing: (resizer: ImageResizer, pool: BlockingPool), held: HeldImage?,
        result: inout FetchResult
    ) async throws(OutputError) -> String? {
        let original = try Self.original(of: key, held: held, in: cache)
        guard let copy = await Self.resized(original, resizing, result: &result) else { return nil }
        let name = fixedName ?? placer.template.render(key, format: copy.format.imageFormat)
        return try placer.write(copy.bytes, at: name)
    }

    /// `original` resized on the resize pool; nil, with `result` failed, when it cannot be
    /// (`corrupt-image`, `too-many-pixels`: the cached original stays, not blacklisted).
    static func resized(
        _ original: [UInt8], _ resizing: (resizer: ImageResizer, pool: BlockingPool), result: inout FetchResult
    ) async -> ResizedImage? {
        switch await resizing.pool.run({ resizing.resizer.resize(original) }) {
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
