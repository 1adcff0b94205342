/// The first 128 bits of SHA-256 over a ``URLKey``'s text.
///
/// Fixed-size so a de-duplication set over millions of URLs stays small; 128 bits makes
/// an accidental collision between two keys negligible. Stable across processes and
/// machines, which `Hasher` is not, so it also names cache files and picks shards.
public struct KeyDigest: Hashable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(of text: String) {
        let hash = text.withUTF8Bytes { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        (high, low) = hash.withUnsafeBytes { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// 32 lower-case hex digits.
    public var hex: String { hex(digits: 32) }

    /// The first 8 of ``hex``: the `-o` names' disambiguating suffix.
    public var shortHex: String { hex(digits: 8) }

    /// The first `digits` hex digits, written straight into the string's storage: names and
    /// paths of every warm-run hit are made of them.
    private func hex(digits: Int) -> String {
        String(unsafeUninitializedCapacity: digits) { out in
            writeHex(digits: digits, into: out)
            return digits
        }
    }

    /// Writes the first `digits` hex digits to the start of `out`.
    package func writeHex(digits: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        for index in 0..<digits {
            let word = index < 16 ? high : low
            out[index] = Self.hexDigit(UInt8(truncatingIfNeeded: word >> UInt64((15 - index % 16) * 4)) & 0xF)
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    public var description: String { hex }

    /// SHA-256 bits are evenly spread already: the first 64 of them, under the table's
    /// per-process seed, hash a digest without SipHash rounds. (Maps and sets of digests
    /// are what `clean`, `verify` and a run's lookups spend their time in; nobody chooses
    /// a URL whose SHA-256 falls where they like.)
    public func hash(into hasher: inout Hasher) { hasher.combine(high) }

    public func _rawHashValue(seed: Int) -> Int { Int(truncatingIfNeeded: high) ^ seed }

    /// Parses ``hex`` back; nil for anything else.
    public init?(hex: some StringProtocol) {
        let bytes = Array(hex.utf8)
        guard bytes.count == 32 else { return nil }
        var words: [UInt64] = [0, 0]
        for (index, char) in bytes.enumerated() {
            let nibble: UInt8
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = char - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = char - UInt8(ascii: "a") + 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(nibble)
        }
        self.init(high: words[0], low: words[1])
    }
}
