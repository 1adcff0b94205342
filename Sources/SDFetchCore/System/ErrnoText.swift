import FoundationEssentials
import Glibc

/// `strerror(code)` in lower case, for failure details ("no space left on device").
///
/// The one rendering of an `errno` in messages; ``SystemCallError`` uses it too.
package func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code)).lowercased()
}
