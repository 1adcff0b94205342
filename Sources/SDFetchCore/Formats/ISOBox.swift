/// One box of an ISO base media file (ISO/IEC 14496-12, 4.2): a size, a four-character
/// type and a payload. HEIF, AVIF and the JPEG XL container are all built of boxes.
///
/// Sizes come from the file, so every box is checked against the bytes actually held:
/// a box claiming more than remains is cut at the end of the data and flagged
/// ``isTruncated``, never read past.
struct ISOBox {
    let type: String
    /// Offsets of the payload inside the whole file.
    let payload: Range<Int>
    let isTruncated: Bool

    /// The boxes laid one after another in `range`, stopping at the first malformed header.
    ///
    /// At most `limit` boxes are returned, which bounds the work on a file made of
    /// thousands of empty boxes.
    static func boxes(in view: ByteView, range: Range<Int>, limit: Int = 256) -> [ISOBox] {
        var boxes: [ISOBox] = []
        var offset = range.lowerBound
        while offset < range.upperBound, boxes.count < limit {
            guard let box = box(in: view, at: offset, end: range.upperBound) else { break }
            boxes.append(box)
            if box.isTruncated { break }
            offset = box.payload.upperBound
        }
        return boxes
    }

    /// The first box of `type` in `range`, if any.
    static func first(_ type: String, in view: ByteView, range: Range<Int>) -> ISOBox? {
        boxes(in: view, range: range).first { $0.type == type }
    }

    private static func box(in view: ByteView, at offset: Int, end: Int) -> ISOBox? {
        guard let size32 = view.uint32(at: offset, bigEndian: true), view.contains(offset + 4, length: 4) else {
            return nil
        }
        let type = String(decoding: view.bytes[offset + 4..<offset + 8], as: UTF8.self)
        var headerLength = 8
        var declaredEnd: Int
        switch size32 {
        case 0:
            // Size 0: the box runs to the end of the enclosing range.
            declaredEnd = end
        case 1:
            // Size 1: a 64-bit size follows the type.
            guard let size64 = view.uint64BE(at: offset + 8), size64 <= UInt64(Int.max) else { return nil }
            headerLength = 16
            let (sum, overflow) = offset.addingReportingOverflow(Int(size64))
            declaredEnd = overflow ? Int.max : sum
        default:
            declaredEnd = offset + Int(size32)
        }
        let payloadStart = offset + headerLength
        guard declaredEnd >= payloadStart, payloadStart <= end else { return nil }
        let isTruncated = declaredEnd > end
        return ISOBox(type: type, payload: payloadStart..<min(declaredEnd, end), isTruncated: isTruncated)
    }
}
