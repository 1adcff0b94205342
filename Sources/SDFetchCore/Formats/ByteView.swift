/// Bounds-checked reads of fixed-width integers from untrusted bytes.
///
/// Every reader of a file header goes through these: an offset past the end yields nil
/// instead of trapping, so a short or lying header can never crash the process. Offsets
/// are `Int` and checked for overflow, since they often come from the file itself.
struct ByteView {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    /// Whether `length` bytes exist at `offset`.
    func contains(_ offset: Int, length: Int) -> Bool {
        guard offset >= 0, length >= 0 else { return false }
        let (end, overflow) = offset.addingReportingOverflow(length)
        return !overflow && end <= bytes.count
    }

    func uint8(at offset: Int) -> UInt8? {
        contains(offset, length: 1) ? bytes[offset] : nil
    }

    func uint16(at offset: Int, bigEndian: Bool) -> UInt16? {
        guard contains(offset, length: 2) else { return nil }
        let a = UInt16(bytes[offset])
        let b = UInt16(bytes[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    /// A 24-bit little-endian value, as WebP's VP8X canvas size stores it.
    func uint24LE(at offset: Int) -> UInt32? {
        guard contains(offset, length: 3) else { return nil }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
    }

    func uint32(at offset: Int, bigEndian: Bool) -> UInt32? {
        guard contains(offset, length: 4) else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 {
            let byte = UInt32(bytes[bigEndian ? offset + index : offset + 3 - index])
            value = value << 8 | byte
        }
        return value
    }

    func uint64BE(at offset: Int) -> UInt64? {
        guard let high = uint32(at: offset, bigEndian: true),
            let low = uint32(at: offset + 4, bigEndian: true)
        else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// Whether the bytes at `offset` spell `ascii` exactly (a four-character code, a tag).
    func matches(_ ascii: String, at offset: Int) -> Bool {
        let expected = Array(ascii.utf8)
        guard contains(offset, length: expected.count) else { return false }
        return bytes[offset..<offset + expected.count].elementsEqual(expected)
    }
}
