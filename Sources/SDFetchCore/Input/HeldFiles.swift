import Glibc

/// The descriptors of a run's list files that are regular files, opened once when its
/// reading starts and closed when the last reader of them is gone (``URLListReader``): the
/// read, its count and the scout's second read (``URLListReader/reread()``) all go through
/// them, never through the path again.
///
/// At most ``limit`` files are held (a run given thousands of lists keeps its descriptors
/// for transfers): past it, every file is opened by path when its turn comes, and the input
/// is read once only.
final class HeldFiles: Sendable {
    /// Per source, its descriptor; nil for standard input, a list in memory, a pipe, a device
    /// or a file that could not be opened (its read reports why).
    private let descriptors: [Int32?]

    static let limit = 64

    init(_ sources: [InputSource]) {
        let files = sources.count { if case .file = $0 { true } else { false } }
        guard files <= Self.limit else {
            descriptors = []
            return
        }
        descriptors = sources.map { source in
            // Only regular files: opening a FIFO, even without waiting, would let its writer's
            // open return, and closing it again would leave that writer with no reader (EPIPE).
            // A FIFO or device is opened when its turn comes, as before.
            var status = stat()
            guard case .file(let path) = source, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG
            else { return nil }
            // Non-blocking all the same: what has the name by now may be a FIFO after all.
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { return nil }
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                return nil
            }
            return fd
        }
    }

    deinit {
        for case let fd? in descriptors { close(fd) }
    }

    /// The descriptor of source `index`, when it is a regular file held.
    func descriptor(of index: Int) -> Int32? {
        index < descriptors.count ? descriptors[index] : nil
    }

    /// Whether every file among `sources` is held: only then can the input be read twice.
    func coversFiles(of sources: [InputSource]) -> Bool {
        sources.indices.allSatisfy { index in
            if case .file = sources[index] { descriptor(of: index) != nil } else { true }
        }
    }
}
