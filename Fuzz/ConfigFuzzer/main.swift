@testable import sdfetch

/// libFuzzer entry point over the config file (sdfetch(1) CONFIGURATION) and the command
/// line, both read through the same option tables and value parsers (numbers, sizes,
/// durations, headers, proxies), which bound every value they accept.
///
/// The first byte's bit 0 picks: the rest is a config file, read by every command as
/// `--config FILE`; or an argument list, split at NUL bytes (at most 64 arguments).
@_cdecl("LLVMFuzzerTestOneInput")
public func configFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    // No default config file is found here: HOME is the fuzzer's own empty folder.
    let environment = ProcessEnvironment.detached(["HOME": FuzzInput.folder])
    if input.mode & 1 == 0 {
        FuzzInput.writeFile("config", input.rest)
        let path = FuzzInput.folder + "/config"
        for words in [[], ["clean"], ["stats"], ["verify"], ["path"], ["merge"], ["failed", "list"]] {
            _ = try? CommandLineParser.parse(words + ["--config", path, "http://h/a.png"], environment: environment)
        }
    } else {
        let arguments = input.rest.split(separator: 0, omittingEmptySubsequences: false).prefix(64)
        _ = try? CommandLineParser.parse(
            arguments.map { String(decoding: $0, as: UTF8.self) }, environment: environment)
    }
    return 0
}
