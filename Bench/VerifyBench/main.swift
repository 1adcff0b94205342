import Foundation

/// Measures verification throughput per format and level over a directory of images
/// (`Scripts/verify-bench.sh`). Not a SwiftPM product: built with `swiftc -O` against the
/// sources of `Formats/` and `Verification/`, as the fuzzer is.
///
/// Files are read into memory first; each level then verifies every file `rounds` times
/// and the best round's CPU time (the process's, single-threaded) counts, so the figures
/// are CPU speed, neither disk speed nor the share a busy machine leaves.
/// With `VERIFY_BENCH_VERBOSE=1` every rejection is printed with its file and detail.
@main
enum VerifyBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            print("usage: verify-bench DIR [ROUNDS] [LEVEL ...]")
            exit(2)
        }
        let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
        let levels =
            arguments.count > 3 ? arguments[3...].compactMap(VerifyMode.init(rawValue:)) : [.header, .structure, .full]
        var files: [ImageFormat: [(name: String, bytes: [UInt8])]] = [:]
        let isVerbose = ProcessInfo.processInfo.environment["VERIFY_BENCH_VERBOSE"] == "1"
        let enumerator = FileManager.default.enumerator(atPath: arguments[1])
        while let path = enumerator?.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: arguments[1] + "/" + path), !data.isEmpty else {
                continue
            }
            let bytes = [UInt8](data)
            guard let format = ImageFormat.sniff(bytes) else { continue }
            files[format, default: []].append((path, bytes))
        }
        print("format\tlevel\tfiles\tMB\tbest CPU s\tMB/s\trejected")
        for format in files.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let group = files[format]!
            let megabytes = Double(group.reduce(0) { $0 + $1.bytes.count }) / 1e6
            for level in levels {
                let verifier = ImageVerifier(mode: level)
                var best = Double.infinity
                var rejected = 0
                for round in 0..<rounds {
                    rejected = 0
                    let start = cpuSeconds()
                    for file in group {
                        guard case .failure(let failure) = verifier.verify(file.bytes) else { continue }
                        rejected += 1
                        if isVerbose && round == 0 {
                            FileHandle.standardError.write(
                                Data("\(level.rawValue)\t\(file.name)\t\(failure.detail)\n".utf8))
                        }
                    }
                    best = min(best, cpuSeconds() - start)
                }
                let line = [
                    format.name, level.rawValue, "\(group.count)", String(format: "%.1f", megabytes),
                    String(format: "%.4f", best), String(format: "%.0f", megabytes / best), "\(rejected)",
                ]
                print(line.joined(separator: "\t"))
            }
        }
    }

    /// CPU time used by this process so far, in seconds.
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
