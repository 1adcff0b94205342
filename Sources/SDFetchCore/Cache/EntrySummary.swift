import Foundation

/// The part of an entry's metadata a warm hit, `clean` and `stats` need: stored time,
/// format, size and dimensions, in a fixed 31-byte binary form.
///
/// Why apart from the URL and validators (``CacheEntry/originRecord``): ext4 keeps an
/// extended attribute this small inside the inode (about 90 bytes are free in a 256-byte
/// inode), while a full record of a few hundred bytes goes to a separate block whose every
/// read also passes through the kernel's attribute-sharing cache; with the whole record in
/// one attribute a warm run spent a tenth of its time there. `originBytes` lets a scan
/// count an entry's bytes without reading that block.
///
/// Layout, little-endian: version (1), format name (4, NUL-padded ASCII), stored time in
/// nanoseconds since 1970 (8), body bytes (8), width (4), height (4), both 0 when unknown,
/// origin record bytes (2).
struct EntrySummary: Sendable, Equatable {
    var storedAt: Date
    var format: ImageFormat
    var bytes: Int64
    var width: Int?
    var height: Int?
    /// Size of the entry's origin record, wherever it is kept.
    var originBytes: Int

    static let version: UInt8 = 1
    static let encodedSize = 31

    var encoded: [UInt8] {
        var bytes: [UInt8] = [Self.version]
        bytes.reserveCapacity(Self.encodedSize)
        let name = Array(format.rawValue.utf8.prefix(4))
        bytes += name + [UInt8](repeating: 0, count: 4 - name.count)
        Self.append(CacheScan.nanoseconds(storedAt), to: &bytes)
        Self.append(self.bytes, to: &bytes)
        Self.append(UInt32(clamping: width ?? 0), to: &bytes)
        Self.append(UInt32(clamping: height ?? 0), to: &bytes)
        Self.append(UInt16(clamping: originBytes), to: &bytes)
        return bytes
    }

    init(storedAt: Date, format: ImageFormat, bytes: Int64, width: Int?, height: Int?, originBytes: Int) {
        self.storedAt = storedAt
        self.format = format
        self.bytes = bytes
        self.width = width
        self.height = height
        self.originBytes = originBytes
    }

    /// Decodes ``encoded``; nil for any other length, version or an unknown format.
    init?(decoding raw: UnsafeRawBufferPointer) {
        guard raw.count == Self.encodedSize, raw[0] == Self.version else { return nil }
        let name = raw[1..<5].prefix { $0 != 0 }
        guard let format = ImageFormat.allCases.first(where: { $0.rawValue.utf8.elementsEqual(name) }) else {
            return nil
        }
        let stored = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 5, as: Int64.self))
        let bytes = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 13, as: Int64.self))
        let width = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 21, as: UInt32.self))
        let height = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 25, as: UInt32.self))
        let origin = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 29, as: UInt16.self))
        guard bytes >= 0 else { return nil }
        let (seconds, nanoseconds) = stored.quotientAndRemainder(dividingBy: 1_000_000_000)
        self.init(
            storedAt: FileTime.date(timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))), format: format,
            bytes: bytes, width: width == 0 ? nil : Int(width), height: height == 0 ? nil : Int(height),
            originBytes: Int(origin))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
