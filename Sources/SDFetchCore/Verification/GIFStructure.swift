/// The `structure` check of a GIF (<doc:Verification#Levels>): the header, logical screen
/// and colour tables, then every extension and image block with its chain of data
/// sub-blocks, up to the trailer (`3B`). The LZW data is not decoded.
///
/// Judged as a browser would: a frame reaching past the logical screen is clipped by
/// browsers, so it is accepted (each frame's own size still meets `--max-pixels`); bytes
/// after the trailer are ignored. A byte that starts no block where one should start ends
/// the stream once an image has been read: Firefox and Chrome stop there as if at the
/// trailer and show what came before (a second GIF glued after the first's data is the
/// common case). A chain that runs off the end, such a byte before any image, a missing
/// trailer or an LZW code size of 12 bits or more (no decoder can start) is corrupt.
///
/// Layout from the GIF89a specification, sections 17-27. Stateless; safe from any thread.
enum GIFStructure {
    static func walk(_ data: UnsafeRawBufferPointer, maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        var widestCodeSize: UInt8 = 0
        return walk(data, maxPixels: maxPixels, widestCodeSize: &widestCodeSize)
    }

    /// Whether a frame starts its LZW codes wider than giflib accepts (9 to 11 bits of
    /// minimum code size, which browsers decode): such a file is judged by its structure.
    static func needsWideLZWCodes(_ data: UnsafeRawBufferPointer) -> Bool {
        var widestCodeSize: UInt8 = 0
        _ = walk(data, maxPixels: .max, widestCodeSize: &widestCodeSize)
        return widestCodeSize > 8
    }

    private static func walk(
        _ data: UnsafeRawBufferPointer, maxPixels: Int64, widestCodeSize: inout UInt8
    ) -> Result<PixelSize, FetchFailure> {
        guard let width = data.uint16LE(at: 6), let height = data.uint16LE(at: 8), let flags = data.byte(at: 10),
            data.has(13, at: 0)
        else { return .failure(corrupt("data ends inside the logical screen descriptor")) }
        let screen = PixelSize(width: width, height: height)
        if let failure = screen.check("gif", maxPixels: maxPixels) { return .failure(failure) }
        var offset = 13 + colourTableBytes(flags)
        var blocks = 0
        var images = 0
        while true {
            guard let introducer = data.byte(at: offset) else {
                return .failure(corrupt("data ends before the trailer"))
            }
            switch introducer {
            case 0x3B:
                return .success(screen)
            case 0x21:
                // Introducer, label, then the sub-blocks (the first holds the fixed fields).
                offset += 2
            case 0x2C:
                guard let frameWidth = data.uint16LE(at: offset + 5), let frameHeight = data.uint16LE(at: offset + 7),
                    let frameFlags = data.byte(at: offset + 9)
                else { return .failure(corrupt("data ends inside an image descriptor")) }
                let frame = PixelSize(width: frameWidth, height: frameHeight)
                // An empty frame draws nothing (browsers skip it); only its size can be too big.
                if frame.width > 0, frame.height > 0, let failure = frame.check("gif frame", maxPixels: maxPixels) {
                    return .failure(failure)
                }
                offset += 10 + colourTableBytes(frameFlags)
                guard let codeSize = data.byte(at: offset) else {
                    return .failure(corrupt("data ends before an image's lzw data"))
                }
                // LZW codes are at most 12 bits and start one bit wider than this.
                guard codeSize < 12 else { return .failure(corrupt("lzw minimum code size of \(codeSize)")) }
                widestCodeSize = max(widestCodeSize, codeSize)
                offset += 1
                images += 1
            default:
                if images > 0 { return .success(screen) }
                return .failure(corrupt("unknown block introducer \(introducer)"))
            }
            if let failure = skipSubBlocks(data, from: &offset) { return .failure(failure) }
            blocks += 1
            if blocks & 0xFFF == 0, Interruption.isRequested {
                return .failure(FetchFailure(.interrupted, "gif verification cancelled"))
            }
        }
    }

    /// Bytes of the colour table a packed flags byte announces (bit 7 set: 3 x 2^(n+1)).
    private static func colourTableBytes(_ flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
    }

    /// Follows a chain of sub-blocks (a size byte, then that many bytes) to its empty
    /// terminator; leaves `offset` after it.
    private static func skipSubBlocks(_ data: UnsafeRawBufferPointer, from offset: inout Int) -> FetchFailure? {
        while true {
            guard offset < data.count else { return corrupt("data ends inside a sub-block chain") }
            let size = Int(data[offset])
            offset += 1 + size
            if size == 0 { return nil }
        }
    }

    static func corrupt(_ reason: String) -> FetchFailure {
        FetchFailure(.corruptImage, "gif structure: \(reason)")
    }
}
