/// Sizes of swept entries when some share one file (``ContentFile``): a file counts once
/// however many entries name it, and removing an entry frees its file only with the last
/// entry that names it. Entries share a file when they name one inode.
enum SharedFiles {
    /// The inodes that more than one of `items` name, with how many name each: sorted
    /// numbers, not a dictionary of every entry, so a sweep of a million costs 8 MB here.
    static func counts(_ items: [SweptEntry]) -> [UInt64: Int] {
        var inodes = items.map(\.inode)
        inodes.sort()
        var shared: [UInt64: Int] = [:]
        var start = 0
        while start < inodes.count {
            var end = start + 1
            while end < inodes.count && inodes[end] == inodes[start] { end += 1 }
            if end - start > 1 { shared[inodes[start]] = end - start }
            start = end
        }
        return shared
    }

    /// What `items` take on disk: every index line, and every file once.
    static func footprint(_ items: [SweptEntry]) -> Int64 {
        footprint(items, shared: counts(items))
    }

    static func footprint(_ items: [SweptEntry], shared: [UInt64: Int]) -> Int64 {
        var total: Int64 = 0
        var counted = Set<UInt64>()
        for item in items {
            total += item.bytes
            if shared[item.inode] != nil, !counted.insert(item.inode).inserted { total -= item.fileBytes }
        }
        return total
    }

    /// What removing `removed` freed, when `kept` remain: their index lines, and the files
    /// no kept entry names (each once).
    static func freed(_ removed: [SweptEntry], keeping kept: [SweptEntry]) -> Int64 {
        let removedInodes = Set(removed.map(\.inode))
        var stillNamed = Set<UInt64>()
        for item in kept where removedInodes.contains(item.inode) { stillNamed.insert(item.inode) }
        var total: Int64 = 0
        var counted = Set<UInt64>()
        for item in removed {
            total += item.bytes - item.fileBytes
            if !stillNamed.contains(item.inode), counted.insert(item.inode).inserted { total += item.fileBytes }
        }
        return total
    }
}
