import Glibc
import SDFetchCore
import Synchronization

/// The first failed write to standard output, so a run whose results did not all reach
/// their file (a full disk: `sdfetch --json urls.txt > report.jsonl`) says so and exits 3
/// instead of 0 (sdfetch(1) EXIT STATUS). A closed pipe (`EPIPE`: `sdfetch urls | head`)
/// is the reader's choice to stop, not a failure.
enum OutputFailure {
    private static let firstErrno = Atomic<Int32>(0)

    /// Notes a write to `fd` that failed with `code`; only standard output's count.
    static func note(fd: Int32, errno code: Int32) {
        guard fd == STDOUT_FILENO, code != EPIPE else { return }
        _ = firstErrno.compareExchange(expected: 0, desired: code == 0 ? EIO : code, ordering: .relaxed)
    }

    /// Why standard output could not be written, or nil when every write went through.
    static var reason: String? {
        let code = firstErrno.load(ordering: .relaxed)
        guard code != 0 else { return nil }
        return errnoText(code)
    }
}
