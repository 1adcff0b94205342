import Glibc
import SDFetchCore

/// `-o -` with one URL, as curl's `-o -`: the image's bytes (or its resized copy) go to
/// standard output, for a pipe (`sdfetch URL -o - | convert - ...`); the result line and
/// messages go to standard error. The cache is filled as for any run. A write that fails
/// is the run's, as for result lines (``OutputFailure``: exit 3, a closed pipe being the
/// reader's choice), not the URL's: its image was fetched and stored.
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
            guard let copy = await OutputDelivery.resized(bytes, resizing, result: &result) else { return }
            bytes = copy.bytes
        }
        // A pipe read slowly (or a terminal after Ctrl-S) blocks the write: off the cooperative pool.
        let image = bytes
        let code = await BlockingWork.run("sdfetch-stdout") { FileIO.writeAll(image, to: STDOUT_FILENO) ? 0 : errno }
        if code != 0 { OutputFailure.note(fd: STDOUT_FILENO, errno: code) }
        result.path = Self.path
    }
}
