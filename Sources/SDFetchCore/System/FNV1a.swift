/// FNV-1a, 64 bits: a hash of bytes that is the same in every process and run, unlike
/// Swift's seeded `Hasher`: index lines carry it as their torn-write check
/// (``IndexRecord``), and it places a host on a loop thread (``CurlEngine``). Not a
/// defence: anyone can compute it.
enum FNV1a {
    static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }
}
