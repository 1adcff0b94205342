import SDFetchCore
import Testing

/// The run's set of met keys: exact across its folds into sorted arrays.
@Suite("Key digest set")
struct KeyDigestSetTests {
    private static func digest(_ index: Int) -> KeyDigest { KeyDigest(of: "http://example.test/\(index).png") }

    @Test("members before and after folds are found, others are not, repeats are refused")
    func membership() {
        var set = KeyDigestSet()
        // Past two folds of 65,536, and a remainder not yet folded.
        let count = 140_000
        let refused = (0..<count).filter { !set.insert(Self.digest($0)) }
        #expect(refused.isEmpty && set.count == count)
        let missing = (0..<count).filter { !set.contains(Self.digest($0)) }
        #expect(missing.isEmpty)
        let inserted = stride(from: 0, to: count, by: 97).filter { set.insert(Self.digest($0)) }
        #expect(inserted.isEmpty, "repeats taken in")
        let strangers = (count..<(count + 2_000)).filter { set.contains(Self.digest($0)) }
        #expect(strangers.isEmpty)
        // Same high half, another low half: told apart.
        let first = Self.digest(0)
        #expect(!set.contains(KeyDigest(high: first.high, low: first.low ^ 1)))
        #expect(set.count == count)
    }

    @Test("sets of the same digests are equal whatever the order they were met in")
    func equality() {
        let digests = (0..<70_000).map(Self.digest)
        var forward = KeyDigestSet()
        var backward = KeyDigestSet()
        for digest in digests { forward.insert(digest) }
        for digest in digests.reversed() { backward.insert(digest) }
        #expect(forward == backward)
        backward.insert(Self.digest(-1))
        #expect(forward != backward)
        let pair: KeyDigestSet = [digests[0], digests[1], digests[0]]
        #expect(pair.count == 2)
    }
}
