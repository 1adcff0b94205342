import Foundation

/// Measures verification throughput per format and level over a directory of images
/// (`Scripts/verify-bench.sh`). Not a SwiftPM product: built with `swiftc -O` against the
/// sources of `Formats/` and `Verification/`, as the fuzzer is.
///
/// Files are read into memory first; each level then verifies every file `rounds` times
/// and the best round's time counts, so the figures are CPU speed, not disk speed.
@main
enum VerifyBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            print("usage: verify-bench DIR [ROUNDS] [LEVEL ...]")
            exit(2)
        }
        let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
        let levels = arguments.count > 3 ? arguments[3...].compactMap(VerifyMode.init(rawValue:)) : [.header, .structure, .full]
        var files: [ImageFormat: [[UInt8]]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: arguments[1])
        while let path = enumerator?.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: arguments[1] + "/" + path), !data.isEmpty else { continue }
            let bytes = [UInt8](data)
            guard let format = ImageFormat.sniff(bytes) else { continue }
            files[format, default: []].append(bytes)
        }
        print("format\tlevel\tfiles\tMB\tbest s\tMB/s\trejected")
        for format in files.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let group = files[format]!
            let megabytes = Double(group.reduce(0) { $0 + $1.count }) / 1e6
            for level in levels {
                let verifier = ImageVerifier(mode: level)
                var best = Double.infinity
                var rejected = 0
                for _ in 0..<rounds {
                    rejected = 0
                    let start = DispatchTime.now().uptimeNanoseconds
                    for bytes in group {
                        if case .failure = verifier.verify(bytes) { rejected += 1 }
                    }
                    best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
                let line = [
                    format.name, level.rawValue, "\(group.count)", String(format: "%.1f", megabytes),
                    String(format: "%.4f", best), String(format: "%.0f", megabytes / best), "\(rejected)",
                ]
                print(line.joined(separator: "\t"))
            }
        }
    }
}
