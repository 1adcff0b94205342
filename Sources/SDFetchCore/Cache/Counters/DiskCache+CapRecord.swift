import FoundationEssentials
import Glibc

/// The "within cap" record: lets a run that stored nothing skip the size scan.
///
/// `enforceLimit` must know the cache's total size, which costs a `stat` of every file:
/// on a warm run over a large cache that scan costs as much as serving every URL. The
/// file `within-cap` holds the byte cap of the last trim (by any process). Every process
/// deletes it before making its first new entry visible, so while it exists nothing has
/// been added since that trim, and a run that added nothing under a cap at least as large
/// can skip the scan. A run killed after storing has already deleted it, so the next run
/// scans. One window is accepted: a trim finishing while another process stores its
/// second or later entry; that process trims again at its own end.
extension DiskCache {
    static let capRecordName = "within-cap"

    /// Whether the cache is known to be at most `maxBytes` without scanning it.
    func isKnownWithin(_ maxBytes: Int64) -> Bool {
        guard !hasStored.load(ordering: .acquiring) else { return false }
        let fd = SafeOpen.file(Self.capRecordName, in: root.value, flags: O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let bytes = SafeOpen.readAll(fd, limit: 64),
            let cap = Int64(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace })
        else { return false }
        return cap <= maxBytes
    }

    /// Records that a trim just left the cache within `maxBytes`.
    func recordWithin(_ maxBytes: Int64) {
        try? AtomicWrite.write(
            Array("\(maxBytes)\n".utf8), to: directory + "/" + Self.capRecordName,
            temporaryDirectory: temporaryDirectory)
    }

    /// Called before a new entry becomes visible: the cache may now exceed the recorded cap.
    func forgetCapRecord() {
        if !hasStored.exchange(true, ordering: .acquiringAndReleasing) { unlinkat(root.value, Self.capRecordName, 0) }
    }
}
