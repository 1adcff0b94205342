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
