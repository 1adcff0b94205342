/// Bucket numbering: the first byte of a key's digest picks one of 256 buckets, each a
/// folder under `entries/` and `failed/`, an index file and a lock.
enum Buckets {
    static let count = 256

    static func index(of digest: KeyDigest) -> Int { Int(digest.high >> 56) }

    private static let names: [String] = (0..<256).map { index in
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[index >> 4], digits[index & 0xF]], as: UTF8.self)
    }

    /// Two lower-case hex digits.
    static func name(_ index: Int) -> String { names[index] }

    /// The bucket number of a two-hex-digit name, or nil.
    static func index(named name: String) -> Int? {
        guard name.utf8.count == 2, let value = UInt8(name, radix: 16), name == names[Int(value)] else { return nil }
        return Int(value)
    }
}
