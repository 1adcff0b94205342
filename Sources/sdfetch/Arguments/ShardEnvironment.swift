import SDFetchCore

/// `--shard auto` (README, "Running past one machine"; sdfetch(1) ENVIRONMENT): the shard index
/// and count from the job runner's variables.
///
/// Runners are tried in a fixed order and the first whose two variables are both set wins;
/// `SDFETCH_SHARD=K/N` comes first so a user (or a Kubernetes Indexed Job, which only sets
/// `JOB_COMPLETION_INDEX`) can always say it outright.
enum ShardEnvironment {
    /// One runner's convention: where its index and count live and where its index starts.
    struct Runner: Sendable {
        /// Where a runner's numbering starts.
        enum FirstIndex: Sendable {
            case fixed(Int)
            /// Read from this variable (0 when unset).
            case variable(String)
        }

        let name: String
        let index: String
        let count: String
        let first: FirstIndex

        func firstIndex(_ variables: [String: String]) -> Int? {
            switch first {
            case .fixed(let value): value
            case .variable(let name): variables[name].flatMap { $0.isEmpty ? nil : $0 }.map { Int($0) } ?? 0
            }
        }
    }

    static let runners: [Runner] = [
        // GitLab's `parallel:` numbers jobs from 1.
        Runner(name: "GitLab", index: "CI_NODE_INDEX", count: "CI_NODE_TOTAL", first: .fixed(1)),
        Runner(name: "CircleCI", index: "CIRCLE_NODE_INDEX", count: "CIRCLE_NODE_TOTAL", first: .fixed(0)),
        Runner(
            name: "Buildkite", index: "BUILDKITE_PARALLEL_JOB", count: "BUILDKITE_PARALLEL_JOB_COUNT", first: .fixed(0)),
        // `--array=1-4` numbers tasks from 1: the index is counted from the array's first task.
        Runner(
            name: "Slurm", index: "SLURM_ARRAY_TASK_ID", count: "SLURM_ARRAY_TASK_COUNT",
            first: .variable("SLURM_ARRAY_TASK_MIN")),
    ]

    /// The shard the environment names, or a usage error saying which variables were looked for.
    static func shard(from variables: [String: String]) throws(UsageError) -> Shard {
        if let text = variables["SDFETCH_SHARD"], !text.isEmpty {
            return try ValueParsers.shard(text, option: "SDFETCH_SHARD")
        }
        for runner in runners {
            guard let indexText = variables[runner.index], !indexText.isEmpty,
                let countText = variables[runner.count], !countText.isEmpty
            else { continue }
            guard let index = Int(indexText), let count = Int(countText), let first = runner.firstIndex(variables),
                let shard = Shard(index: index - first, count: count)
            else {
                throw UsageError(
                    "--shard auto: \(runner.name)'s \(runner.index)=\(Escaping.terminal(indexText)) and "
                        + "\(runner.count)=\(Escaping.terminal(countText)) do not name a shard")
            }
            return shard
        }
        let names = ["SDFETCH_SHARD"] + runners.map { "\($0.index)/\($0.count)" }
        throw UsageError("--shard auto: no job runner index found (looked for \(names.joined(separator: ", ")))")
    }
}
