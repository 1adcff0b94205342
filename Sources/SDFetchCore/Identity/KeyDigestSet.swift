/// A set of key digests in about 16 bytes each, exact: what a run keeps of every URL it met
/// (the de-duplication, then the keys its trim protects). A `Set<KeyDigest>` of a million
/// keys holds 33 MB and, while it grows past 786,432, 50 MB at once (its old and new
/// storage): half the memory bound of a million-line run.
///
/// Digests are SHA-256 bits, evenly spread: they are kept in 256 sorted arrays by their
/// first byte, and new ones in a small hash set, folded into the arrays every
/// ``foldSize`` insertions. A lookup hashes once and binary-searches about a 256th of the
/// keys; growing copies one small array at a time.
public struct KeyDigestSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// Digests not yet folded: a fold rewrites every array, so it waits for this many.
    static let foldSize = 1 << 16

    private var sorted = [[KeyDigest]](repeating: [], count: 256)
    private var recent = Set<KeyDigest>()
    public private(set) var count = 0

    public init() {}

    public init(arrayLiteral digests: KeyDigest...) {
        for digest in digests { insert(digest) }
    }

    public var isEmpty: Bool { count == 0 }

    public func contains(_ digest: KeyDigest) -> Bool {
        recent.contains(digest) || Self.search(sorted[Self.part(of: digest)], digest)
    }

    /// Adds `digest`; false when it was in the set already.
    @discardableResult
    public mutating func insert(_ digest: KeyDigest) -> Bool {
        guard !contains(digest) else { return false }
        recent.insert(digest)
        count += 1
        if recent.count >= Self.foldSize { fold() }
        return true
    }

    public static func == (lhs: KeyDigestSet, rhs: KeyDigestSet) -> Bool {
        lhs.count == rhs.count && lhs.recent.allSatisfy(rhs.contains)
            && lhs.sorted.allSatisfy { $0.allSatisfy(rhs.contains) }
    }

    /// Moves ``recent`` into the sorted arrays, each merged into storage of its exact new size.
    private mutating func fold() {
        var parts = [[KeyDigest]](repeating: [], count: 256)
        for digest in recent { parts[Self.part(of: digest)].append(digest) }
        recent = []
        for index in parts.indices where !parts[index].isEmpty {
            let new = parts[index].sorted(by: Self.precedes)
            let old = sorted[index]
            var merged: [KeyDigest] = []
            merged.reserveCapacity(old.count + new.count)
            var (left, right) = (0, 0)
            while left < old.count || right < new.count {
                if right == new.count || (left < old.count && Self.precedes(old[left], new[right])) {
                    merged.append(old[left])
                    left += 1
                } else {
                    merged.append(new[right])
                    right += 1
                }
            }
            sorted[index] = merged
        }
    }

    private static func part(of digest: KeyDigest) -> Int { Int(digest.high >> 56) }

    private static func precedes(_ a: KeyDigest, _ b: KeyDigest) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }

    private static func search(_ digests: [KeyDigest], _ digest: KeyDigest) -> Bool {
        var (low, high) = (0, digests.count)
        while low < high {
            let middle = (low + high) / 2
            if precedes(digests[middle], digest) { low = middle + 1 } else { high = middle }
        }
        return low < digests.count && digests[low] == digest
    }
}
