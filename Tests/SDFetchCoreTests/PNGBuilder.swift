/// Builds minimal PNG byte streams with correct chunk CRCs, for headers no encoder writes.
enum PNGBuilder {
    /// Signature, IHDR (8-bit RGBA), a stub IDAT and IEND: enough for libpng's
    /// header read to succeed, so only the pixel limit can reject it early.
    static func header(width: UInt32, height: UInt32) -> [UInt8] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0]
        // A zlib header alone: libpng reads chunks up to the first IDAT before it reports.
        return signature + chunk("IHDR", ihdr) + chunk("IDAT", [0x78, 0x9C]) + chunk("IEND", [])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 as the PNG spec's Annex D computes it (reflected polynomial 0xEDB88320).
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
