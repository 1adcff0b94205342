internal import CGIF

/// The bytes giflib reads from and how far it has got: the context of ``read(_:_:_:)``,
/// giflib's input callback, for ``GIFVerifier`` and ``GIFFirstFrame``. Lives on the stack
/// of the decode that opened the file.
struct GIFMemorySource {
    let base: UnsafePointer<UInt8>
    let count: Int
    var offset = 0

    /// Copies up to `length` bytes, fewer at the end of the data (a short read is how
    /// giflib learns the data ended).
    static func read(
        _ gif: UnsafeMutablePointer<GifFileType>?, _ destination: UnsafeMutablePointer<GifByteType>?, _ length: Int32
    ) -> Int32 {
        guard let gif, let destination, length > 0, let context = gif.pointee.UserData else { return 0 }
        let source = context.assumingMemoryBound(to: GIFMemorySource.self)
        let copied = min(Int(length), source.pointee.count - source.pointee.offset)
        guard copied > 0 else { return 0 }
        destination.update(from: source.pointee.base + source.pointee.offset, count: copied)
        source.pointee.offset += copied
        return Int32(copied)
    }

    /// Opens `bytes` with giflib, checks the logical screen against the limit, and hands
    /// `body` the open file and the screen's size; closes the file after.
    static func open<T>(
        _ bytes: [UInt8], maxPixels: Int64,
        _ body: (UnsafeMutablePointer<GifFileType>, PixelSize) -> Result<T, FetchFailure>
    ) -> Result<T, FetchFailure> {
        bytes.withUnsafeBufferPointer { data -> Result<T, FetchFailure> in
            guard let base = data.baseAddress else { return .failure(.decodeFailed("gif", "no data")) }
            var source = GIFMemorySource(base: base, count: data.count)
            return withUnsafeMutablePointer(to: &source) { context in
                var error: Int32 = 0
                guard let gif = DGifOpen(context, { GIFMemorySource.read($0, $1, $2) }, &error) else {
                    return .failure(.decodeFailed("gif", describe(error)))
                }
                defer { DGifCloseFile(gif, &error) }
                let screen = PixelSize(width: gif.pointee.SWidth, height: gif.pointee.SHeight)
                if let failure = screen.check("gif", maxPixels: maxPixels) { return .failure(failure) }
                return body(gif, screen)
            }
        }
    }

    /// giflib's words for an error code.
    static func describe(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
