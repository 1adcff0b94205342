import FoundationEssentials
import Glibc

/// An open directory descriptor, closed with its owner; -1 when the directory could not be
/// opened, in which case relative opens simply fail (a miss).
final class DirectoryDescriptor: Sendable {
    let value: Int32

    init(_ value: Int32) {
        self.value = value
    }

    deinit {
        if value >= 0 { close(value) }
    }
}
