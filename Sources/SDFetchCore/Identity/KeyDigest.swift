import Crypto

/// The first 128 bits of SHA-256 over a ``URLKey``'s text.
///
/// Fixed-size so a de-duplication set over millions of URLs stays small; 128 bits makes
/// an accidental collision between two keys negligible. Stable across processes and
/// machines, which `Hasher` is not, so it also names cache files and picks shards.
public struct KeyDigest: Hashable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(of text: String) {
        let hash = SHA256.hash(data: Array(text.utf8))
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in hash.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// 32 lower-case hex digits.
    public var hex: String {
        // Written straight into the string's storage: this runs twice per warm-run hit.
        String(unsafeUninitializedCapacity: 32) { out in
            for index in 0..<16 {
                let word = index < 8 ? high : low
                let byte = UInt8(truncatingIfNeeded: word >> (UInt64(7 - index % 8) * 8))
                out[index * 2] = Self.hexDigit(byte >> 4)
                out[index * 2 + 1] = Self.hexDigit(byte & 0xF)
            }
            return 32
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    public var description: String { hex }

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
