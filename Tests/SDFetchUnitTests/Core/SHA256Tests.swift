import SDFetchCore
import Testing

/// SHA-256 from libcrypto against FIPS 180-4's published digests: keys, entry checks and
/// `Content-Digest` all depend on these exact bytes, on every machine.
@Suite("SHA-256")
struct SHA256Tests {
    private func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    @Test("the standard's examples hash to their published digests")
    func knownDigests() {
        let abc = hex(SHA256.hash(data: Array("abc".utf8)))
        #expect(abc == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash(data: [UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA256.hash(data: twoBlocks)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("a hash fed in pieces equals the one-shot hash, and a copy goes on on its own")
    func piecesAndCopies() {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var hasher = SHA256()
        var offset = 0
        for size in [1, 63, 64, 65, 4096, 100_000] {
            million[offset..<offset + size].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            offset += size
        }
        var copy = hasher
        million[offset...].withUnsafeBytes { hasher.update(bufferPointer: $0) }
        #expect(hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(hex(hasher.finalize()) == hex(SHA256.hash(data: million)), "finalize leaves the hasher as it was")
        copy.update(bufferPointer: UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(hex(copy.finalize()) == hex(SHA256.hash(data: million[..<offset])))
    }
}
