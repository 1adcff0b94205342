import FoundationEssentials
import Glibc

/// Runs one system call: retries it while it fails with `EINTR` (a signal arrived, the
/// call did nothing) and turns any other `-1` into a ``SystemCallError``; what the world
/// can cause is thrown, the caller decides what it means (in the manner of swift-nio's
/// `syscall(blocking:where:_:)` in `NIOPosix/System.swift`).
///
/// The one `EINTR` loop in the tree: every raw read, write and lock goes through it.
@inline(__always)
package func syscall<Result: FixedWidthInteger>(
    where call: StaticString, _ body: () -> Result
) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call: call, errno: code)
    }
}
