internal import CZlib

/// The mark a resized copy carries inside its own file, so that a later run finds the copy
/// already made and decodes nothing (README, "Resized copies").
///
/// Inside the file, not beside it: a plain `cp`, `tar` without `--xattrs`, `rsync` without
/// `-X` or an upload drop an extended attribute, and a sidecar file is left behind by
/// `cp *.jpg` and lies among the images that datasets are read from. A mark inside the file
/// goes wherever the file goes. It is a JPEG comment segment after the JFIF header (which
/// must come first), a PNG
/// `tEXt` chunk before `IEND`, or a WebP chunk `SDFR` at the end (the file turned into the
/// extended format, which allows unknown chunks); every decoder skips it.
///
/// It holds, in plain text, the recipe: every option that decides the copy's bytes (size,
/// mode, format, quality, background, the orientation rule and ``revision``) and the
/// SHA-256 of the cached original; then a seal, the SHA-256 of the recipe and of the file
/// around the mark. A copy is taken as made only when the recipe is this run's and the seal
/// still matches the file: a file made from another original or with other options, or
/// changed after by any tool that kept the mark, is made again. Never a stale copy: at worst
/// one decode too many. Pure; safe from any thread.
struct ResizedCopySeal: Sendable {
    /// Changes whenever the same options and original would give other pixels (the
    /// shrink-on-load rule, the filter, the encoder settings): copies of an older revision
    /// are made again once.
    static let revision = 4

    /// What the mark's text says before the seal's hex digits.
    let recipe: [UInt8]

    init(options: ResizeOptions, originalSHA256: String) {
        let background = options.background.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        let text =
            "sdfetch-resize/\(Self.revision) \(options.mode.rawValue) \(options.size) \(options.format.rawValue) "
            + "q\(options.quality) bg \(background) orientation exif original \(originalSHA256.lowercased()) seal "
        recipe = Array(text.utf8)
    }

    private static let digitCount = SHA256.byteCount * 2
    /// The mark's text: the recipe, then the seal's hex digits.
    private var textCount: Int { recipe.count + Self.digitCount }

    // MARK: - Sealing

    /// `encoded` (a fresh copy of `format`, as ``PixelEncoder`` wrote it) with the mark in it.
    func sealing(_ encoded: [UInt8], as format: ResizeFormat) -> [UInt8] {
        var text = recipe + [UInt8](repeating: UInt8(ascii: "0"), count: Self.digitCount)
        let (head, tail, frame) = Self.split(encoded, format: format, textCount: text.count)
        text.replaceSubrange(recipe.count..., with: seal(head: head[...], tail: tail[...]))
        return head + frame.wrapping(text) + tail
    }

    /// Whether `file` is the copy this recipe makes: its mark is there, says this recipe,
    /// and its seal matches the rest of the file.
    func isSealed(_ file: [UInt8], as format: ResizeFormat) -> Bool {
        guard let span = Self.markSpan(in: file, format: format, textCount: textCount) else { return false }
        let text = file[span.text]
        guard text.starts(with: recipe) else { return false }
        let digits = text.dropFirst(recipe.count)
        return digits.elementsEqual(seal(head: file[..<span.whole.lowerBound], tail: file[span.whole.upperBound...]))
    }

    /// The hex digits of SHA-256 over the recipe and the file around the mark.
    private func seal(head: ArraySlice<UInt8>, tail: ArraySlice<UInt8>) -> [UInt8] {
        var hash = SHA256()
        for part in [recipe[...], head, tail] {
            part.withUnsafeBytes { hash.update(bufferPointer: $0) }
        }
        let hex = Array("0123456789abcdef".utf8)
        return hash.finalize().flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0x0F)]] }
    }

    // MARK: - Where the mark goes

    /// How a format wraps the mark's text.
    private enum Frame {
        case jpegComment, pngText, webpChunk

        func wrapping(_ text: [UInt8]) -> [UInt8] {
            switch self {
            case .jpegComment:
                let length = text.count + 2
                return [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text
            case .pngText:
                let body = Array("tEXt".utf8) + ResizedCopySeal.pngKeyword + text
                let crc = body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
                return bigEndian(UInt32(body.count - 4)) + body + bigEndian(UInt32(crc))
            case .webpChunk:
                let padding: [UInt8] = text.count % 2 == 1 ? [0] : []
                return Array("SDFR".utf8) + littleEndian(UInt32(text.count)) + text + padding
            }
        }

        /// Bytes before the text: a JPEG marker and length, a PNG chunk's length, type and
        /// keyword, a RIFF chunk's name and size.
        var lead: Int {
            switch self {
            case .jpegComment: 4
            case .pngText: 8 + ResizedCopySeal.pngKeyword.count
            case .webpChunk: 8
            }
        }

        /// Bytes after the text: a PNG chunk's CRC, a RIFF chunk's pad byte.
        func trail(textCount: Int) -> Int {
            switch self {
            case .jpegComment: 0
            case .pngText: 4
            case .webpChunk: textCount % 2
            }
        }
    }

    private static let pngKeyword = Array("sdfetch\0".utf8)

    /// Where the mark of a `textCount`-byte text sits in `file`, if the file has room for it
    /// there: `whole` the framed mark, `text` its text.
    private static func markSpan(
        in file: [UInt8], format: ResizeFormat, textCount: Int
    ) -> (whole: Range<Int>, text: Range<Int>)? {
        let frame = frame(of: format)
        let size = frame.lead + textCount + frame.trail(textCount: textCount)
        let start: Int
        switch format {
        case .jpeg: start = jpegMarkOffset(file)
        case .png: start = file.count - 12 - size
        case .webp: start = file.count - size
        }
        guard start >= 2, start + size <= file.count else { return nil }
        return (start..<(start + size), (start + frame.lead)..<(start + frame.lead + textCount))
    }

    /// Where a JPEG's mark starts: after the start of image and the JFIF `APP0` segment
    /// that follows it, when there is one.
    private static func jpegMarkOffset(_ jpeg: [UInt8]) -> Int {
        guard jpeg.count >= 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 else { return 2 }
        return min(jpeg.count, 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5])))
    }

    private static func frame(of format: ResizeFormat) -> Frame {
        switch format {
        case .jpeg: .jpegComment
        case .png: .pngText
        case .webp: .webpChunk
        }
    }

    /// The bytes before and after the mark in a copy of `format` that is to carry one of
    /// `textCount` bytes; a simple WebP is turned into the extended format first, and the
    /// RIFF size counts the mark.
    private static func split(
        _ encoded: [UInt8], format: ResizeFormat, textCount: Int
    ) -> (head: [UInt8], tail: [UInt8], frame: Frame) {
        let frame = frame(of: format)
        switch format {
        case .jpeg:
            let offset = jpegMarkOffset(encoded)
            return (Array(encoded.prefix(offset)), Array(encoded.dropFirst(offset)), frame)
        case .png:
            // libpng ends every file with the 12-byte IEND chunk.
            return (Array(encoded.dropLast(12)), Array(encoded.suffix(12)), frame)
        case .webp:
            var head = WebPExtendedFormat.extended(encoded)
            let markSize = frame.lead + textCount + frame.trail(textCount: textCount)
            let riffSize = head.count - 8 + markSize
            head.replaceSubrange(4..<8, with: littleEndian(UInt32(riffSize)))
            return (head, [], frame)
        }
    }
}

/// A simple (`VP8 `) WebP rewritten in the extended format (a `VP8X` chunk before the
/// bitstream), which may carry chunks of its own; an extended file is returned as it is.
enum WebPExtendedFormat {
    static func extended(_ webp: [UInt8]) -> [UInt8] {
        guard webp.count >= 30, Array(webp[12..<16]) == Array("VP8 ".utf8) else { return webp }
        // The frame header after the 3-byte frame tag and 3-byte start code: 14-bit sizes.
        let width = (Int(webp[26]) | Int(webp[27]) << 8) & 0x3FFF
        let height = (Int(webp[28]) | Int(webp[29]) << 8) & 0x3FFF
        var chunk = Array("VP8X".utf8) + littleEndian(UInt32(10)) + [0, 0, 0, 0]
        chunk += littleEndian(UInt32(width - 1)).prefix(3) + littleEndian(UInt32(height - 1)).prefix(3)
        return Array(webp.prefix(12)) + chunk + webp.dropFirst(12)
    }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

private func littleEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
}
