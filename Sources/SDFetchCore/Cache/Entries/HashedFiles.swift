import Synchronization

/// The SHA-256 of every file `verify` hashed so far, by inode, shared by the buckets it
/// walks in parallel: a file that entries share (``ContentFile``) is read once.
final class HashedFiles: Sendable {
    private let digests = Mutex<[UInt64: String]>([:])

    /// The digest of `inode`, computed with `hash` (empty when unreadable) on first ask;
    /// `isNew` is true for exactly one call per inode, the one whose hash counts. (Two
    /// buckets may hash one file at the same moment: hashing is not done under the lock.)
    /// Only a file with `remember` set (named by other entries too) is kept for the calls
    /// to come; every call finds what is kept, so a file whose sharers `verify` removed
    /// meanwhile (fewer links now) is still hashed once.
    func digest(of inode: UInt64, remember: Bool = true, _ hash: () -> String) -> (digest: String, isNew: Bool) {
        if let known = digests.withLock({ $0[inode] }) { return (known, false) }
        let digest = hash()
        guard remember else { return (digest, true) }
        return digests.withLock { digests in
            if let known = digests[inode] { return (known, false) }
            digests[inode] = digest
            return (digest, true)
        }
    }
}
