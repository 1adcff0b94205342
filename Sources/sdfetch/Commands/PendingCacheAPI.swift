/// Stand-ins until branch `cache` (CacheStats, CleanReport, FailureBlacklist) is merged.
extension CleanCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus { .usage }
}

extension StatsCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus { .usage }
}

extension FailedCommand {
    func run(in environment: ProcessEnvironment) async -> ExitStatus { .usage }
}

enum CacheLimit {
    static func enforce(
        on cache: DiskCache, maxBytes: Int64, protecting keys: Set<KeyDigest>, console: Console
    ) {}
}

import SDFetchCore
