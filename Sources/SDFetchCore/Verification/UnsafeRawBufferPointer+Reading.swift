import Glibc

/// Bounds-checked integer reads for the structural walkers, which work on raw memory
/// (a body in an array today, a file mapping later) rather than on ``ByteView``'s array.
///
/// Every read returns nil past the end instead of trapping: offsets come from the file.
extension UnsafeRawBufferPointer {
    /// Whether `length` bytes exist at `offset`, without overflow.
    @inline(__always)
    func has(_ length: Int, at offset: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= count && length <= count - offset
    }

    @inline(__always)
    func byte(at offset: Int) -> UInt8? {
        offset >= 0 && offset < count ? self[offset] : nil
    }

    @inline(__always)
    func uint16BE(at offset: Int) -> UInt16? {
        guard has(2, at: offset) else { return nil }
        return UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    @inline(__always)
    func uint16LE(at offset: Int) -> UInt16? {
        guard has(2, at: offset) else { return nil }
        return UInt16(self[offset + 1]) << 8 | UInt16(self[offset])
    }

    @inline(__always)
    func uint32BE(at offset: Int) -> UInt32? {
        guard has(4, at: offset) else { return nil }
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self).bigEndian
    }

    @inline(__always)
    func uint32LE(at offset: Int) -> UInt32? {
        guard has(4, at: offset) else { return nil }
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    /// Whether the bytes at `offset` spell the four-character code `code` (ASCII).
    @inline(__always)
    func matches(_ code: StaticString, at offset: Int) -> Bool {
        let length = code.utf8CodeUnitCount
        guard has(length, at: offset) else { return false }
        return memcmp(baseAddress! + offset, code.utf8Start, length) == 0
    }
}
