import FoundationEssentials

/// The random source of every test that draws at random: SplitMix64, seeded from
/// `SDFETCH_TEST_SEED` when set, else from the system's generator. The seed is printed, so a
/// failure seen once can be replayed with `SDFETCH_TEST_SEED=N swift test --filter ...`.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    /// `label` names the test in the printed line.
    public init(_ label: String) {
        let given = ProcessInfo.processInfo.environment["SDFETCH_TEST_SEED"].flatMap { UInt64($0) }
        seed = given ?? UInt64.random(in: .min ... .max)
        state = seed
        print("\(label): random seed \(seed) (SDFETCH_TEST_SEED=\(seed) replays it)")
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
