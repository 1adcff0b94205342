import SDFetchCore
import Testing

@testable import sdfetch

/// `--shard auto` reading each job runner's index and count (README, "Running past one
/// machine").
@Suite("shard auto")
struct ShardAutoTests {
    private func shard(_ variables: [String: String]) throws -> Shard? {
        let command = try CommandLineParser.parse(
            ["--no-config", "--shard", "auto", "list.txt"], environment: .detached(variables))
        return try #require(command as? FetchCommand).shard
    }

    @Test(
        "each runner's variables give the 0-based shard",
        arguments: [
            (["SDFETCH_SHARD": "2/5"], 2, 5),
            (["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"], 0, 4),  // GitLab counts from 1
            (["CI_NODE_INDEX": "4", "CI_NODE_TOTAL": "4"], 3, 4),
            (["CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "3"], 0, 3),
            (["BUILDKITE_PARALLEL_JOB": "2", "BUILDKITE_PARALLEL_JOB_COUNT": "3"], 2, 3),
            (["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "8"], 7, 8),
            (["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"], 2, 4),
            (["SDFETCH_SHARD": "1/2", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"], 1, 2),  // explicit first
        ])
    func runners(variables: [String: String], index: Int, count: Int) throws {
        #expect(try shard(variables) == Shard(index: index, count: count))
    }

    @Test("no runner variables is a usage error naming what was looked for")
    func noneSet() {
        #expect {
            _ = try shard(["HOME": "/h"])
        } throws: { error in
            (error as? UsageError)?.message.contains("SDFETCH_SHARD") == true
        }
    }

    @Test("an index outside the count is a usage error")
    func outOfRange() {
        #expect(throws: UsageError.self) { _ = try shard(["CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"]) }
        #expect(throws: UsageError.self) { _ = try shard(["SDFETCH_SHARD": "4/4"]) }
    }
}
