import FoundationEssentials
import Glibc

/// Replacing an entry with bytes the cache already holds: the entry name is pointed at the
/// shared content file's inode (<doc:OnDiskFormat#Identical-bytes>), as a new store links
/// it, instead of at a file of the replacement's own. A re-download from a server that
/// ignores conditional requests, or a `merge` of a renewed copy, then keeps sharing.
enum SharedReplacement {
    /// Names the open file `shared` (a content file) `name` in `folder`, atomically
    /// replacing whatever had that name: already that inode, nothing changes. Call under the
    /// bucket's lock. False, with nothing changed, when it cannot (the content file lost its
    /// last name meanwhile): the caller then replaces with its own file.
    static func replace(_ name: String, in folder: Int32, with shared: Int32) -> Bool {
        var file = stat()
        var current = stat()
        guard fstat(shared, &file) == 0 else { return false }
        if fstatat(folder, name, &current, AT_SYMLINK_NOFOLLOW) == 0, current.st_dev == file.st_dev,
            current.st_ino == file.st_ino
        {
            return true
        }
        let temporary = FileIO.temporaryName()
        WriterTemporary.hold(shared)
        guard UnnamedFileLink.link(shared, as: temporary, in: folder) else { return false }
        guard renameat(folder, temporary, folder, name) == 0 else {
            unlinkat(folder, temporary, 0)
            return false
        }
        return true
    }
}
