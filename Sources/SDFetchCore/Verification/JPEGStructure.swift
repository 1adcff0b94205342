import Glibc

/// The `structure` check of a JPEG (<doc:Verification#Levels>): markers walked from SOI
/// to EOI, a frame header and at least one scan present, each scan's entropy-coded data
/// free of stray markers and its restart markers in order. No pixel is decoded.
///
/// The rules are libjpeg-turbo's, which browsers use, so the verdict is a browser's:
/// bytes between segments are skipped as libjpeg's `next_marker` skips them (it only
/// warns), segment contents (EXIF, ICC, Adobe) are not interpreted, bytes after EOI are
/// ignored, and every frame type is accepted by structure, including 12-bit, lossless and
/// arithmetic-coded ones that the system libjpeg cannot decode. Truncation anywhere, a
/// missing EOI, a second SOI or frame header and an unknown marker are corrupt.
///
/// The scan of entropy-coded data uses `memchr` for each `FF`, so the walk runs at close to
/// memory speed. Stateless; safe from any thread.
enum JPEGStructure {
    /// Walks `data`. With `headerOnly` it stops at the frame header (the `header` level).
    static func walk(
        _ data: UnsafeRawBufferPointer, maxPixels: Int64, headerOnly: Bool = false
    ) -> Result<PixelSize, FetchFailure> {
        guard data.count >= 2, data[0] == 0xFF, data[1] == 0xD8 else { return .failure(corrupt("no SOI marker")) }
        var offset = 2
        var frame: PixelSize?
        var hasScan = false
        while true {
            guard let marker = nextMarker(data, from: &offset) else {
                return .failure(corrupt(frame == nil ? "data ends before the frame header" : "data ends before EOI"))
            }
            switch marker {
            case 0xD9:
                guard let frame else { return .failure(corrupt("EOI before a frame header")) }
                guard hasScan else { return .failure(corrupt("EOI before any scan")) }
                return .success(frame)
            case 0xD8:
                return .failure(corrupt("second SOI marker"))
            case 0xD0...0xD7, 0x01:
                continue  // RSTn and TEM stand alone; libjpeg ignores them between segments
            default:
                break
            }
            guard let length = data.uint16BE(at: offset), length >= 2, data.has(Int(length), at: offset) else {
                return .failure(corrupt("data ends inside a marker segment"))
            }
            let segment = UnsafeRawBufferPointer(rebasing: data[offset + 2..<offset + Int(length)])
            offset += Int(length)
            switch marker {
            case 0xC0...0xCF where ![0xC4, 0xC8, 0xCC].contains(marker):
                guard frame == nil else { return .failure(corrupt("second frame header")) }
                switch frameSize(segment, marker: marker) {
                case .success(let size):
                    if let failure = size.check("jpeg", maxPixels: maxPixels) { return .failure(failure) }
                    if headerOnly { return .success(size) }
                    frame = size
                case .failure(let failure):
                    return .failure(failure)
                }
            case 0xDA:
                guard frame != nil else { return .failure(corrupt("scan before the frame header")) }
                let components = Int(segment.first ?? 0)
                guard (1...4).contains(components), segment.count == 4 + 2 * components else {
                    return .failure(corrupt("scan header of a wrong length"))
                }
                if let failure = skipEntropyCodedData(data, from: &offset) { return .failure(failure) }
                hasScan = true
                // The scan ends at a marker, which must be one that may follow a scan.
                if let failure = checkMarkerAfterScan(data, at: offset) { return .failure(failure) }
            case 0xC4, 0xCC, 0xDB, 0xDC, 0xDD, 0xE0...0xEF, 0xFE:
                continue  // DHT, DAC, DQT, DNL, DRI, APPn, COM: contents not needed
            default:
                // libjpeg's read_markers: any other code is JERR_UNKNOWN_MARKER.
                return .failure(corrupt("unknown marker \(hex(marker))"))
            }
        }
    }

    // MARK: - Markers

    /// Finds the next marker from `offset` as libjpeg's `next_marker` does: non-FF bytes
    /// are skipped (extraneous data, a warning), as are fill `FF`s and `FF 00` pairs.
    /// Leaves `offset` after the marker code; nil when the data ends first.
    private static func nextMarker(_ data: UnsafeRawBufferPointer, from offset: inout Int) -> UInt8? {
        while true {
            guard let ff = find(0xFF, in: data, from: offset) else { return nil }
            var next = ff + 1
            while next < data.count && data[next] == 0xFF { next += 1 }
            guard next < data.count else { return nil }
            offset = next + 1
            if data[next] != 0x00 { return data[next] }
        }
    }

    /// After a scan libjpeg expects a segment or EOI; a code such as TEM or SOI sitting in
    /// the entropy-coded data is a stray marker (the data is broken).
    private static func checkMarkerAfterScan(_ data: UnsafeRawBufferPointer, at offset: Int) -> FetchFailure? {
        var next = offset
        while next < data.count && data[next] == 0xFF { next += 1 }
        guard next < data.count else { return corrupt("data ends inside a scan") }
        switch data[next] {
        case 0xC0...0xCF, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xE0...0xEF, 0xFE: return nil
        default: return corrupt("stray marker \(hex(data[next])) in entropy-coded data")
        }
    }

    /// Skips one scan's entropy-coded data: `FF 00` is a stuffed byte, `FF D0`-`FF D7`
    /// restart markers must count 0 to 7 and round again (ITU T.81 B.2.1), and any other
    /// marker ends the data. Leaves `offset` on that marker's `FF`.
    private static func skipEntropyCodedData(_ data: UnsafeRawBufferPointer, from offset: inout Int) -> FetchFailure? {
        var expectedRestart: UInt8 = 0
        var position = offset
        while true {
            guard let ff = find(0xFF, in: data, from: position) else { return corrupt("data ends inside a scan") }
            var next = ff + 1
            while next < data.count && data[next] == 0xFF { next += 1 }
            guard next < data.count else { return corrupt("data ends inside a scan") }
            let code = data[next]
            switch code {
            case 0x00:
                position = next + 1
            case 0xD0...0xD7:
                guard code - 0xD0 == expectedRestart else { return corrupt("restart markers out of order") }
                expectedRestart = (expectedRestart + 1) & 7
                position = next + 1
            default:
                offset = ff
                return nil
            }
        }
    }

    private static func find(_ byte: UInt8, in data: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        guard offset < data.count, let base = data.baseAddress else { return nil }
        guard let found = memchr(base + offset, Int32(byte), data.count - offset) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    // MARK: - Frame header

    /// Reads a frame header's size after checking what libjpeg checks of its layout
    /// (ITU T.81 B.2.2): the length matches the component count, sampling factors are
    /// 1 to 4, precision is 8 or 12 (2 to 16 for the lossless processes).
    private static func frameSize(_ segment: UnsafeRawBufferPointer, marker: UInt8) -> Result<PixelSize, FetchFailure> {
        guard segment.count >= 6, let height = segment.uint16BE(at: 1), let width = segment.uint16BE(at: 3) else {
            return .failure(corrupt("frame header too short"))
        }
        let precision = segment[0]
        let components = Int(segment[5])
        guard components >= 1, segment.count == 6 + 3 * components else {
            return .failure(corrupt("frame header of a wrong length"))
        }
        let isLossless = marker & 0x03 == 0x03
        guard isLossless ? (2...16).contains(precision) : (precision == 8 || precision == 12) else {
            return .failure(corrupt("sample precision of \(precision) bits"))
        }
        for component in 0..<components {
            let sampling = segment[6 + 3 * component + 1]
            guard (1...4).contains(sampling >> 4), (1...4).contains(sampling & 0x0F) else {
                return .failure(corrupt("sampling factors out of range"))
            }
        }
        return .success(PixelSize(width: width, height: height))
    }

    /// A marker as the spec writes it, "ffd8" (details are lower-case).
    private static func hex(_ code: UInt8) -> String {
        let digits = String(code, radix: 16)
        return "ff" + (digits.count == 1 ? "0" : "") + digits
    }

    static func corrupt(_ reason: String) -> FetchFailure {
        FetchFailure(.corruptImage, "jpeg structure: \(reason.lowercased())")
    }
}
