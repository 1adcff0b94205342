@testable import SDFetchCore

/// libFuzzer entry point over format sniffing, the structural walkers and every
/// verification level.
///
/// Built by `Scripts/fuzz.sh` with `swiftc -sanitize=fuzzer,address` against SDFetchCore
/// built the same way (not through SwiftPM, whose products must not carry fuzzer
/// instrumentation). The limit is lower than the product's default so that a
/// legitimately huge declared image costs milliseconds and a few MB, keeping the run fast
/// and its memory far below libFuzzer's RSS limit: what the fuzzer hunts is crashes,
/// hangs and leaks, not big decodes.
///
/// The walkers are also called directly on the raw bytes whatever their signature, so
/// every input exercises all four of them, not only the one sniffing picks.
@_cdecl("LLVMFuzzerTestOneInput")
public func verifyFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = ImageFormat.sniff(bytes)
    for mode in VerifyMode.allCases {
        _ = ImageVerifier(mode: mode, maxPixels: 4_000_000).verify(bytes)
    }
    bytes.withUnsafeBytes { raw in
        _ = PNGStructure.walk(raw, maxPixels: 4_000_000)
        _ = JPEGStructure.walk(raw, maxPixels: 4_000_000)
        _ = JPEGStructure.walk(raw, maxPixels: 4_000_000, headerOnly: true)
        _ = GIFStructure.walk(raw, maxPixels: 4_000_000)
        _ = WebPStructure.check(raw)
    }
    return 0
}
