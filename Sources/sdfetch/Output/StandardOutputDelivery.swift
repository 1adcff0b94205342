import Glibc
import SDFetchCore

/// `-o -` with one URL, as curl's `-o -`: the image's bytes (or its resized copy) go to
/// standard output, for a pipe (`sdfetch URL -o - | convert - ...`); the result line and
/// messages go to standard error. The cache is filled as for any run.
struct StandardOutputDelivery: ResultDelivery {
    let cache: DiskCache
    /// `--resize`: the copy is written instead of the original (``OutputDelivery/resizing``).
    var resizing: (resizer: ImageResizer, pool: BlockingPool)?

    /// What the result line shows as the image's place.
    static let path = "-"

    func deliver(_ result: inout FetchResult) async {
        guard let key = result.key, result.status.isSuccess else { return }
        var bytes: [UInt8]
        do throws(OutputError) {
            bytes = try OutputDelivery.original(of: key, held: result.heldImage, in: cache)
        } catch {
            result.failDelivery(FetchFailure(.io, error.detail), entryWasRemoved: error.isEntryGone)
            return
        }
        if let resizing {
            let original = bytes
            switch await resizing.pool.run({ resizing.resizer.resize(original) }) {
            case .success(let copy): bytes = copy.bytes
            case .failure(let failure):
                result.failDelivery(failure)
                return
            }
        }
        guard FileIO.writeAll(bytes, to: STDOUT_FILENO) else {
            result.failDelivery(FetchFailure(.io, "cannot write standard output: \(errnoText(errno))"))
            return
        }
        result.path = Self.path
    }
}
