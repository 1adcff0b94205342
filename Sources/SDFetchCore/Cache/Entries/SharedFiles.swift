/// Sizes of entries when some share one file (``ContentFile``): a file counts once however
/// many entries name it. Entries share a file when they name one inode. (`stats` counts
/// this way; the cap counts each entry's own bytes, see <doc:OnDiskFormat#Counters-and-trimming>.)
enum SharedFiles {
    /// What entries take on disk from their sizes alone: `lines`, the sum of every entry's
    /// bytes (file and line), less each file counted more than once (`files`: each entry's
    /// file inode and size; sorted here, not hashed, so a million cost 16 MB).
    static func footprint(lines: Int64, files: [(inode: UInt64, bytes: Int64)]) -> Int64 {
        var sorted = files
        sorted.sort { $0.inode < $1.inode }
        var total = lines
        for index in sorted.indices.dropFirst() where sorted[index].inode == sorted[index - 1].inode {
            total -= sorted[index].bytes
        }
        return total
    }
}
