import FoundationEssentials
import Glibc

/// One line of an index bucket (`index/ab`): the only encoding of entry metadata, format 4
/// (see ``CacheFormat``).
///
/// A line is `LF CHECK SP PAYLOAD LF` (empty lines are skipped), CHECK being 16 hex digits of FNV-1a-64 over PAYLOAD,
/// so a line torn by a crash or interleaved by a file system without atomic appends is
/// recognised and skipped, as npm's `cacache` does with its hashed index lines. PAYLOAD is
/// tab-separated:
///
///     P  digest  stamp  stored_ns  used_ns  bytes  format  width  height  sha256  etag  last_modified  url
///     U  digest  used_ns
///
/// `P` (put) describes the entry file of `digest` (see ``CacheEntry``); width and height are
/// empty when unknown, etag and last-modified when absent. `U` (use) records a later use
/// for LRU. Later lines win. Text fields escape `\`, tab, LF and CR as `\\ \t \n \r`.
enum IndexRecord: Equatable {
    case put(KeyDigest, CacheEntry)
    case use(KeyDigest, usedAt: Int64)

    var digest: KeyDigest {
        switch self {
        case .put(let digest, _), .use(let digest, _): digest
        }
    }

    // MARK: - Encoding

    /// The whole line, both newlines included.
    var line: [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(256)
        func field(_ text: String) {
            payload.append(0x09)
            Self.escape(text, into: &payload)
        }
        switch self {
        case .put(let digest, let entry):
            payload.append(UInt8(ascii: "P"))
            field(digest.hex)
            field(String(entry.stamp))
            field(String(FileTime.nanoseconds(entry.storedAt)))
            field(String(FileTime.nanoseconds(entry.accessedAt)))
            field(String(entry.bytes))
            field(entry.format.rawValue)
            field(entry.width.map(String.init) ?? "")
            field(entry.height.map(String.init) ?? "")
            field(entry.sha256)
            field(entry.etag ?? "")
            field(entry.lastModified ?? "")
            field(entry.url)
        case .use(let digest, let usedAt):
            payload.append(UInt8(ascii: "U"))
            field(digest.hex)
            field(String(usedAt))
        }
        // A leading newline ends any line a crashed writer left torn, so this one stays whole.
        var line: [UInt8] = [0x0A]
        line.reserveCapacity(payload.count + 19)
        line += Self.hex(payload.withUnsafeBytes(Self.checksum))
        line.append(0x20)
        line += payload
        line.append(0x0A)
        return line
    }

    /// The length of ``line`` for a `put` of `entry`, counted without encoding it (escapes,
    /// which real values do not have, aside): its share of the cache's bytes.
    static func lineLength(of entry: CacheEntry) -> Int {
        func digits(_ value: Int64) -> Int {
            var count = value < 0 ? 2 : 1
            var rest = value.magnitude
            while rest >= 10 {
                rest /= 10
                count += 1
            }
            return count
        }
        let numbers =
            digits(entry.stamp) + digits(FileTime.nanoseconds(entry.storedAt))
            + digits(FileTime.nanoseconds(entry.accessedAt)) + digits(entry.bytes)
            + (entry.width.map { digits(Int64($0)) } ?? 0) + (entry.height.map { digits(Int64($0)) } ?? 0)
        let texts =
            entry.format.rawValue.utf8.count + entry.sha256.utf8.count + (entry.etag?.utf8.count ?? 0)
            + (entry.lastModified?.utf8.count ?? 0) + entry.url.utf8.count
        // LF, check, SP, kind, 12 tabs, digest, LF
        return 1 + 16 + 1 + 1 + 12 + 32 + 1 + numbers + texts
    }

    private static func escape(_ text: String, into bytes: inout [UInt8]) {
        text.withUTF8Bytes { text in
            // Real fields (digests, times, URLs) have nothing to escape: copied in one go.
            guard text.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                return bytes.append(contentsOf: text)
            }
            escapeEach(text, into: &bytes)
        }
    }

    private static func escapeEach(_ text: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        for byte in text {
            switch byte {
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
            default: bytes.append(byte)
            }
        }
    }

    // MARK: - Decoding

    /// Parses one line without its newline; nil when the check fails or a field is malformed.
    init?(line: UnsafeRawBufferPointer) {
        guard line.count > 19, line[16] == 0x20,
            let check = Self.hexValue(UnsafeRawBufferPointer(rebasing: line[0..<16])),
            check == Self.checksum(UnsafeRawBufferPointer(rebasing: line[17...]))
        else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: line[17...])
        let fields = Self.fields(of: payload, upTo: 14)
        func bytes(_ index: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: payload[fields[index]]) }
        guard fields[0].count == 1, fields.count >= 3, let digest = KeyDigest(hexBytes: bytes(1)) else { return nil }
        switch payload[0] {
        case UInt8(ascii: "U"):
            guard fields.count == 3, let usedAt = Self.time(bytes(2)) else { return nil }
            self = .use(digest, usedAt: usedAt)
        case UInt8(ascii: "P"):
            guard fields.count == 13, let stamp = Self.stamp(bytes(2)), let stored = Self.time(bytes(3)),
                let used = Self.time(bytes(4)), let size = Self.size(bytes(5)),
                let format = Self.format(named: bytes(6)),
                let width = Self.optionalInteger(bytes(7)), let height = Self.optionalInteger(bytes(8)),
                fields[9].count == 64, let sha256 = Self.text(bytes(9)),
                let etag = Self.text(bytes(10)), let lastModified = Self.text(bytes(11)),
                let url = Self.text(bytes(12)), !url.isEmpty
            else { return nil }
            let entry = CacheEntry(
                url: url, storedAt: FileTime.date(nanoseconds: stored), accessedAt: FileTime.date(nanoseconds: used),
                etag: etag.isEmpty ? nil : etag, lastModified: lastModified.isEmpty ? nil : lastModified,
                format: format, bytes: size, width: width.map(Int.init), height: height.map(Int.init),
                sha256: sha256, stamp: stamp)
            self = .put(digest, entry)
        default:
            return nil
        }
    }

    /// What a sweep needs of a line, read without making a single string: the digest, and for
    /// a put its stored and use times and body size, with the line's exact length.
    struct Summary {
        var digest: KeyDigest
        var isPut: Bool
        var storedAt: Int64 = 0
        var usedAt: Int64
        var bytes: Int64 = 0
        /// The whole line's bytes, both newlines included.
        var lineBytes: Int
    }

    /// ``Summary`` of one line without its newlines; nil when the check fails or the fields
    /// a sweep reads are malformed (the rest is checked by the full parse on use).
    static func summary(line: UnsafeRawBufferPointer) -> Summary? {
        guard line.count > 19, line[16] == 0x20, let check = hexValue(UnsafeRawBufferPointer(rebasing: line[0..<16])),
            check == checksum(UnsafeRawBufferPointer(rebasing: line[17...]))
        else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: line[17...])
        let fields = fields(of: payload, upTo: 7)
        func bytes(_ index: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: payload[fields[index]]) }
        guard fields.count >= 3, fields[0].count == 1, let digest = KeyDigest(hexBytes: bytes(1)) else { return nil }
        switch payload[0] {
        case UInt8(ascii: "U"):
            guard let used = Self.time(bytes(2)) else { return nil }
            return Summary(digest: digest, isPut: false, usedAt: used, lineBytes: line.count + 2)
        case UInt8(ascii: "P"):
            guard fields.count == 7, let stored = Self.time(bytes(3)), let used = Self.time(bytes(4)),
                let size = Self.size(bytes(5))
            else { return nil }
            return Summary(
                digest: digest, isPut: true, storedAt: stored, usedAt: used, bytes: size, lineBytes: line.count + 2)
        default:
            return nil
        }
    }

    /// The digest, kind and last use of one line without its newlines, read without its
    /// check: how a lookup maps a bucket's log (``IndexBucket``), whose lines are checked
    /// when a lookup reads them. Nil for a line that is not shaped as one.
    static func peek(line: UnsafeRawBufferPointer) -> (digest: KeyDigest, isPut: Bool, usedAt: Int64)? {
        // CHECK(16) SP kind TAB digest(32) TAB ...
        guard line.count > 52, line[16] == 0x20, line[18] == 0x09, line[51] == 0x09,
            let digest = KeyDigest(hexBytes: UnsafeRawBufferPointer(rebasing: line[19..<51]))
        else { return nil }
        switch line[17] {
        case UInt8(ascii: "U"):
            guard let used = time(UnsafeRawBufferPointer(rebasing: line[52...])) else { return nil }
            return (digest, false, used)
        case UInt8(ascii: "P"):
            // stamp TAB stored TAB used TAB ...
            var start = 52
            for _ in 0..<2 {
                guard let tab = offset(of: 0x09, in: line, from: start) else { return nil }
                start = tab + 1
            }
            guard let end = offset(of: 0x09, in: line, from: start),
                let used = time(UnsafeRawBufferPointer(rebasing: line[start..<end]))
            else { return nil }
            return (digest, true, used)
        default:
            return nil
        }
    }

    /// The tab-separated fields of `payload`, at most `limit` of them (the last then runs to
    /// the end of the line, tabs and all; a full parse asks for one more than it accepts).
    private static func fields(of payload: UnsafeRawBufferPointer, upTo limit: Int) -> [Range<Int>] {
        var fields: [Range<Int>] = []
        fields.reserveCapacity(limit)
        var start = 0
        while fields.count < limit - 1, let tab = offset(of: 0x09, in: payload, from: start) {
            fields.append(start..<tab)
            start = tab + 1
        }
        fields.append(start..<payload.count)
        return fields
    }

    /// The offset of the first `byte` in `bytes` at or after `start` (`memchr`: index lines
    /// are read by the tens of thousands when a run starts).
    static func offset(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The offset of the last `byte` in `bytes`.
    static func lastOffset(of byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Int? {
        bytes.lastIndex(of: byte)
    }

    /// Every format's name as bytes, made once: `allCases` builds a new array per call.
    private static let formatNames: [(name: [UInt8], format: ImageFormat)] =
        ImageFormat.allCases.map { (Array($0.rawValue.utf8), $0) }

    private static func format(named bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        formatNames.first { $0.name.elementsEqual(bytes) }?.format
    }

    /// An escaped text field as a string; nil when it is not UTF-8 or has a bad escape.
    private static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        // ASCII without escapes, the usual field, is taken as it is: nothing to validate.
        if bytes.allSatisfy({ $0 < 0x80 && $0 != 0x5C }) {
            return String(decoding: bytes.bindMemory(to: UInt8.self), as: UTF8.self)
        }
        guard bytes.contains(0x5C) else {
            return String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self)
        }
        var plain: [UInt8] = []
        plain.reserveCapacity(bytes.count)
        var escaped = false
        for byte in bytes {
            if escaped {
                switch byte {
                case 0x5C: plain.append(0x5C)
                case UInt8(ascii: "t"): plain.append(0x09)
                case UInt8(ascii: "n"): plain.append(0x0A)
                case UInt8(ascii: "r"): plain.append(0x0D)
                default: return nil
                }
                escaped = false
            } else if byte == 0x5C {
                escaped = true
            } else {
                plain.append(byte)
            }
        }
        return escaped ? nil : String(validating: plain, as: UTF8.self)
    }

    /// A decimal integer (optional leading `-`); nil for anything else or on overflow.
    static func integer(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < bytes.count, bytes.count - index <= 19 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdding) = times10.addingReportingOverflow(Int64(digit))
            guard !overflow && !overflowAdding else { return nil }
            value = sum
            index += 1
        }
        return negative ? -value : value
    }

    // MARK: - Bounds

    /// Latest time a record may hold: 2100-01-01 in nanoseconds. A forged index is data, not
    /// code: every field is bounded where it is read, so sums of sizes and conversions of
    /// times cannot overflow later (<doc:OnDiskFormat>).
    static let maxTime: Int64 = 4_102_444_800 * 1_000_000_000
    /// Largest entry size a record may claim: 32 GiB, far past any image `--max-pixels`
    /// lets through. With reads capped at ``SafeOpen/maxReadBytes`` per bucket, 256 buckets
    /// hold at most some 118 million put lines (146 bytes at the shortest), and 118 million
    /// times 32 GiB is under half of `Int64.max`: no sum of sizes over an index can overflow.
    static let maxEntryBytes: Int64 = 1 << 35

    /// A time field: nanoseconds from 1970 to ``maxTime``, else nil.
    static func time(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        integer(bytes).flatMap { (0...maxTime).contains($0) ? $0 : nil }
    }

    /// A stamp field: whole seconds from 1970 to ``maxTime``, else nil (in nanoseconds
    /// `99999999999` would overflow).
    static func stamp(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        integer(bytes).flatMap { (0...(maxTime / 1_000_000_000)).contains($0) ? $0 : nil }
    }

    /// A size field: 0 to ``maxEntryBytes``, else nil.
    static func size(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        integer(bytes).flatMap { (0...maxEntryBytes).contains($0) ? $0 : nil }
    }

    /// Empty is `.some(nil)`; a malformed or negative number nil.
    private static func optionalInteger(_ bytes: UnsafeRawBufferPointer) -> Int64?? {
        if bytes.isEmpty { return .some(nil) }
        guard let value = integer(bytes), value >= 0, value <= Int64(UInt32.max) else { return nil }
        return .some(value)
    }

    // MARK: - Check

    /// ``FNV1a``: a torn-write detector, not a defence (whoever can write the bucket can
    /// write a matching check).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        FNV1a.hash(bytes)
    }

    private static func hex(_ value: UInt64) -> [UInt8] {
        (0..<16).map { index in
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64((15 - index) * 4)) & 0xF
            return nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }

    /// The value of 16 lower-case hex digits; nil for anything else. Read eight digits at
    /// a time, in one 64-bit word: every log line of a bucket has its check and digest read
    /// when a run first looks the bucket up, and a digit at a time was the largest part of
    /// mapping a large cache's log tails.
    static func hexValue(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count == 16, let high = hexWord(bytes, at: 0), let low = hexWord(bytes, at: 8) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// The value of the 8 hex digits at `offset`, each byte handled in its own lane.
    private static func hexWord(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits = ones &* 0x80
        // A lane's high bit: set when its byte is in low..<high (every byte under 0x80, so
        // no sum carries into the next lane).
        func inRange(_ low: UInt64, _ high: UInt64) -> UInt64 {
            (word &+ ones &* (0x80 - low)) & ~(word &+ ones &* (0x80 - high)) & highBits
        }
        guard word & highBits == 0, inRange(0x30, 0x3A) | inRange(0x61, 0x67) == highBits else { return nil }
        // A digit's value is its low nibble, plus 9 for a letter (bit 6 set).
        let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        // Pairs of nibbles into bytes, then bytes into one word; the first digit is the most
        // significant, and the first byte the lowest of a little-endian load.
        let pairs = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
        let quads = (pairs | (pairs >> 8)) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: quads | (quads >> 16)).byteSwapped
    }
}

extension KeyDigest {
    /// Parses 32 lower-case hex digits from raw bytes (an index line); nil for anything else.
    init?(hexBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32, let high = IndexRecord.hexValue(UnsafeRawBufferPointer(rebasing: bytes[0..<16])),
            let low = IndexRecord.hexValue(UnsafeRawBufferPointer(rebasing: bytes[16..<32]))
        else { return nil }
        self.init(high: high, low: low)
    }
}
