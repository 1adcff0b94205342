/// Reads a TIFF image's size from the first image file directory (IFD0), without decoding.
///
/// TIFF 6.0, section 2: an 8-byte header (byte order "II"/"MM", 42, offset of IFD0),
/// then at that offset a 2-byte entry count and 12-byte entries: tag, field type, value
/// count, and the value itself when it fits in 4 bytes. ImageWidth is tag 256 and
/// ImageLength tag 257, each SHORT (type 3) or LONG (type 4). Every offset is checked
/// against the data, and the walk is bounded by the entries the data can hold.
enum TIFFHeader {
    private static let imageWidthTag: UInt16 = 256
    private static let imageLengthTag: UInt16 = 257
    private static let shortType: UInt16 = 3
    private static let longType: UInt16 = 4
    private static let entryLength = 12

    static func size(_ view: ByteView) -> PixelSize? {
        let bigEndian = view.matches("MM", at: 0)
        guard let directory = view.uint32(at: 4, bigEndian: bigEndian),
            let entryCount = view.uint16(at: Int(directory), bigEndian: bigEndian)
        else { return nil }
        var width: UInt32?
        var height: UInt32?
        let firstEntry = Int(directory) + 2
        for index in 0..<Int(entryCount) {
            let entry = firstEntry + index * entryLength
            guard let tag = view.uint16(at: entry, bigEndian: bigEndian),
                let type = view.uint16(at: entry + 2, bigEndian: bigEndian)
            else { return nil }
            guard tag == imageWidthTag || tag == imageLengthTag else { continue }
            let value: UInt32?
            switch type {
            case shortType: value = view.uint16(at: entry + 8, bigEndian: bigEndian).map(UInt32.init)
            case longType: value = view.uint32(at: entry + 8, bigEndian: bigEndian)
            default: return nil
            }
            if tag == imageWidthTag { width = value } else { height = value }
            if let width, let height { return PixelSize(width: width, height: height) }
        }
        return nil
    }
}
