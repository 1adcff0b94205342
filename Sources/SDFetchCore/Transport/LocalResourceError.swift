import FoundationEssentials
import Glibc

/// Errors that say this machine ran out of something, not that the server failed.
enum LocalResourceError {
    case descriptors
    case memory

    init?(errno code: Int32) {
        switch code {
        case EMFILE, ENFILE: self = .descriptors
        case ENOMEM, ENOBUFS: self = .memory
        default: return nil
        }
    }

    var detail: String {
        switch self {
        case .descriptors: "out of file descriptors on this machine"
        case .memory: "out of memory on this machine"
        }
    }
}
