import FoundationEssentials
import Glibc

/// A system call that failed: which call and its `errno`, read at once after the call
/// (the way swift-nio's `IOError` carries them), so nothing in between can overwrite it.
package struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function's name: `read`, `pread`, `flock`.
    package let call: StaticString
    package let errno: Int32

    /// Lower case, for failure details: "no space left on device".
    package var description: String { errnoText(errno) }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.errno == rhs.errno && lhs.call.description == rhs.call.description
    }
}

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
