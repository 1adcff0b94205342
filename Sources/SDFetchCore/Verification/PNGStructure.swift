internal import CZlib

/// The `structure` check of a PNG (<doc:Verification#Levels>): every chunk from `IHDR` to
/// `IEND` walked with its CRC-32, and the image data's zlib stream inflated to its end
/// without keeping any pixels.
///
/// Judged as a browser's libpng would: a critical chunk with a wrong CRC is corrupt, an
/// ancillary one (text, colour profile, APNG's `acTL`/`fcTL`/`fdAT`) is skipped; bytes after
/// `IEND` are ignored. Data that ends before `IEND` (between chunks or inside one) is
/// corrupt while the image data is incomplete, and accepted once it is complete: browsers
/// draw every row by then and need nothing after it (``completingEnd(_:)`` gives libpng,
/// which reads to `IEND`, the end such a file lacks). The inflated size may never exceed what `IHDR` implies (all seven
/// Adam7 passes when interlaced): inflation stops at the first byte past it, which bounds
/// the CPU an inflate bomb can cost by the size the image declares
/// (<doc:Verification#Budgets>).
///
/// Stateless; safe from any thread. Stops with `interrupted` when the calling task is
/// cancelled.
enum PNGStructure {
    /// The 8-byte PNG signature (PNG spec, section 5.2).
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Walks `data`; the declared size on success.
    static func walk(_ data: UnsafeRawBufferPointer, maxPixels: Int64) -> Result<PixelSize, FetchFailure> {
        guard data.count >= 8, signature.withUnsafeBytes({ $0.elementsEqual(data.prefix(8)) }) else {
            return .failure(corrupt("signature damaged"))
        }
        guard data.uint32BE(at: 8) == 13, data.matches("IHDR", at: 12), data.has(25 + 4, at: 8) else {
            return .failure(corrupt("first chunk is not a complete IHDR"))
        }
        guard chunkCRCMatches(data, at: 8, length: 13) else { return .failure(corrupt("IHDR fails its crc")) }
        let header: Header
        switch Header.read(data, at: 16) {
        case .success(let value): header = value
        case .failure(let failure): return .failure(failure)
        }
        if let failure = header.size.check("png", maxPixels: maxPixels) { return .failure(failure) }
        return walkChunks(data, from: 33, header: header).map { header.size }
    }

    // MARK: - Chunks

    /// Walks the chunks after IHDR up to IEND, feeding IDAT payloads to one inflater.
    private static func walkChunks(
        _ data: UnsafeRawBufferPointer, from start: Int, header: Header
    ) -> Result<Void, FetchFailure> {
        var inflater = ImageDataInflater(expectedBytes: header.imageDataBytes)
        defer { inflater.end() }
        var offset = start
        var hasPalette = false
        var imageDataState = 0  // 0 none yet, 1 inside the IDAT run, 2 after it
        while true {
            guard let length = data.uint32BE(at: offset), data.has(12, at: offset) else {
                if inflater.hasEnded { return inflater.finish() }
                return .failure(corrupt("data ends before IEND"))
            }
            // PNG spec 5.3: a length is at most 2^31 - 1.
            guard length <= 0x7FFF_FFFF, data.has(Int(length) + 12, at: offset) else {
                if inflater.hasEnded { return inflater.finish() }
                return .failure(corrupt("data ends inside a chunk"))
            }
            let type = data.uint32BE(at: offset + 4)!
            guard isValidType(type) else { return .failure(corrupt("invalid chunk type")) }
            let isCritical = type & 0x2000_0000 == 0
            if !chunkCRCMatches(data, at: offset, length: Int(length)) {
                // Browsers drop an ancillary chunk whose CRC is wrong and show the image.
                guard isCritical else {
                    offset += Int(length) + 12
                    continue
                }
                return .failure(corrupt("\(name(of: type)) chunk fails its crc"))
            }
            let payload = UnsafeRawBufferPointer(rebasing: data[offset + 8..<offset + 8 + Int(length)])
            switch type {
            case ChunkType.idat:
                guard !(header.colourType == 3 && !hasPalette) else {
                    return .failure(corrupt("palette image without PLTE before IDAT"))
                }
                // libpng needs the IDAT run unbroken while it still wants data; IDATs after
                // the stream's end are only a warning there.
                guard imageDataState != 2 || inflater.hasEnded else {
                    return .failure(corrupt("image data interrupted by another chunk"))
                }
                imageDataState = 1
                if let failure = inflater.feed(payload) { return .failure(failure) }
            case ChunkType.iend:
                guard imageDataState != 0 else { return .failure(corrupt("no IDAT before IEND")) }
                return inflater.finish()
            case ChunkType.plte:
                hasPalette = true
            case ChunkType.ihdr:
                return .failure(corrupt("second IHDR"))
            default:
                // libpng refuses an unknown critical chunk; ancillary ones are skipped.
                if isCritical { return .failure(corrupt("unknown critical chunk \(name(of: type))")) }
                if imageDataState == 1 { imageDataState = 2 }
            }
            offset += Int(length) + 12
        }
    }

    /// `bytes` ending with a whole `IEND` chunk: unchanged (nil) when it already has one;
    /// else cut after its last whole chunk, with an `IEND` appended. For the decoder, after
    /// ``walk(_:maxPixels:)`` accepted a file whose end was cut after complete image data.
    static func completingEnd(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBytes { data -> [UInt8]? in
            var offset = 8
            while let length = data.uint32BE(at: offset), length <= 0x7FFF_FFFF,
                data.has(Int(length) + 12, at: offset)
            {
                if data.uint32BE(at: offset + 4) == ChunkType.iend { return nil }
                offset += Int(length) + 12
            }
            return Array(bytes[..<offset]) + endChunk
        }
    }

    /// A whole `IEND` chunk: length 0, type, CRC-32 of the type.
    private static let endChunk: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    /// Whether the CRC stored after a chunk matches its type and data (PNG spec 5.3).
    private static func chunkCRCMatches(_ data: UnsafeRawBufferPointer, at offset: Int, length: Int) -> Bool {
        let covered = UnsafeRawBufferPointer(rebasing: data[offset + 4..<offset + 8 + length])
        let computed = crc32(0, covered.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(covered.count))
        return UInt32(computed) == data.uint32BE(at: offset + 8 + length)
    }

    /// Chunk types are four ASCII letters (PNG spec 5.4).
    private static func isValidType(_ type: UInt32) -> Bool {
        (0..<4).allSatisfy { shift in
            let byte = UInt8(truncatingIfNeeded: type >> (shift * 8))
            return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    private static func name(of type: UInt32) -> String {
        String(decoding: (0..<4).reversed().map { UInt8(truncatingIfNeeded: type >> ($0 * 8)) }, as: UTF8.self)
    }

    static func corrupt(_ reason: String) -> FetchFailure {
        FetchFailure(.corruptImage, "png structure: \(reason.lowercased())")
    }

    /// The critical chunk types as big-endian 32-bit values.
    private enum ChunkType {
        static let ihdr: UInt32 = 0x4948_4452
        static let plte: UInt32 = 0x504C_5445
        static let idat: UInt32 = 0x4944_4154
        static let iend: UInt32 = 0x4945_4E44
    }
}

// MARK: - Header

extension PNGStructure {
    /// The IHDR fields the walk needs (PNG spec 11.2.2).
    struct Header {
        let size: PixelSize
        let bitDepth: Int
        let colourType: Int
        let isInterlaced: Bool

        /// Reads and validates the 13 IHDR bytes at `offset`.
        static func read(_ data: UnsafeRawBufferPointer, at offset: Int) -> Result<Header, FetchFailure> {
            let width = data.uint32BE(at: offset)!
            let height = data.uint32BE(at: offset + 4)!
            let depth = Int(data[offset + 8])
            let colour = Int(data[offset + 9])
            // Table 11.1: the bit depths each colour type allows.
            let isAllowed =
                switch colour {
                case 0: [1, 2, 4, 8, 16].contains(depth)
                case 3: [1, 2, 4, 8].contains(depth)
                case 2, 4, 6: depth == 8 || depth == 16
                default: false
                }
            guard isAllowed else {
                return .failure(corrupt("colour type \(colour) with bit depth \(depth)"))
            }
            guard data[offset + 10] == 0, data[offset + 11] == 0, data[offset + 12] <= 1 else {
                return .failure(corrupt("unknown compression, filter or interlace method"))
            }
            guard width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
                return .failure(corrupt("declares a side over 2^31 - 1"))
            }
            return .success(
                Header(
                    size: PixelSize(width: width, height: height), bitDepth: depth, colourType: colour,
                    isInterlaced: data[offset + 12] == 1))
        }

        var bitsPerPixel: Int {
            let channels =
                switch colourType {
                case 2: 3
                case 4: 2
                case 6: 4
                default: 1  // grey, palette
                }
            return channels * bitDepth
        }

        /// The exact size of the filtered image data: each row is a filter byte and its
        /// packed pixels; an interlaced image is seven such sub-images (PNG spec 8.2), of
        /// which empty passes have no rows at all. Saturates at `UInt64.max` (over any file).
        var imageDataBytes: UInt64 {
            guard isInterlaced else { return bytes(width: size.width, height: size.height) }
            // Adam7 passes: (x start, y start, x step, y step).
            let passes = [
                (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
            ]
            return passes.reduce(0) { total, pass in
                let columns = (size.width - pass.0 + pass.2 - 1) / pass.2
                let rows = (size.height - pass.1 + pass.3 - 1) / pass.3
                let (sum, overflow) = total.addingReportingOverflow(bytes(width: max(columns, 0), height: max(rows, 0)))
                return overflow ? .max : sum
            }
        }

        private func bytes(width: Int, height: Int) -> UInt64 {
            guard width > 0, height > 0 else { return 0 }
            // Widths are below 2^31 and bitsPerPixel at most 64: no overflow in 64 bits.
            let rowBytes = (UInt64(width) * UInt64(bitsPerPixel) + 7) / 8 + 1
            let (total, overflow) = rowBytes.multipliedReportingOverflow(by: UInt64(height))
            return overflow ? .max : total
        }
    }
}
