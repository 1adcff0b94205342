import FoundationEssentials
import Glibc

/// A cache of format 1 (metadata in extended attributes, no `FORMAT` file): recognised only
/// on evidence everywhere, and removed only by a walk that cannot leave it.
///
/// `clean` removes such a cache, often as root from cron, in a directory whose contents are
/// untrusted (<doc:Security#The-cache-directory-is-untrusted>). So:
/// - **Evidence everywhere.** Every name, at every level, is one format 1 made (``layout(_:)``):
///   a user's folder that has an `entries/` of hex names but a `tmp/` of their own files is
///   not a cache, and nothing in it is removed.
/// - **Held descriptors, never paths.** Each folder is opened with
///   `openat(O_DIRECTORY | O_NOFOLLOW)` relative to its held parent, checked to be the one
///   `fstatat` saw (`st_dev`, `st_ino`), and its names removed with `unlinkat` relative to it;
///   a folder swapped for a link meanwhile is never entered, and a link is removed as a link.
/// - **Only the owner's, only private.** A folder of another user, or one others can write
///   (by every user, or by a group other than the user's private one), is refused whole:
///   whoever can write it can swap names under the walk.
enum FormatOneCache {
    /// What a name may be at one place of format 1's layout.
    enum Shape {
        /// A regular file (removed as such; a link there is removed as a link).
        case file
        /// A real directory whose every name `child` accepts.
        case folder(child: (String) -> Shape?)
    }

    /// Most names read per folder while gathering evidence: a folder with more is no evidence.
    static let evidenceLimit = 4096

    /// Format 1's top level: what each of its names holds.
    static func layout(_ name: String) -> Shape? {
        let bucket = { (leaf: @escaping (String) -> Bool) -> Shape in
            .folder { name in isHex(name, digits: 2) ? .folder { leaf($0) ? .file : nil } : nil }
        }
        switch name {
        case "entries":
            return bucket { isHex($0, digits: 32) || ($0.hasSuffix(".meta") && isHex($0.dropLast(5), digits: 32)) }
        case "failed": return bucket { isHex($0, digits: 32) }
        case "tmp": return .folder { $0.hasSuffix(FileIO.temporarySuffix) ? .file : nil }
        case "locks": return .folder { isHex($0, digits: 2) || $0 == "maintenance" ? .file : nil }
        case "within-cap": return .file
        default: return nil
        }
    }

    /// The names format 1 used at the top of a cache directory.
    static let names = ["entries", "failed", "tmp", "locks", "within-cap"]

    /// Whether the directory open as `root` holds a format-1 cache and nothing else: every
    /// top-level name one of ``names``, an `entries/` with at least one bucket, and every
    /// name below one format 1 made.
    static func isPresent(in root: Int32) -> Bool {
        guard let top = CacheScan.names(in: root, limit: evidenceLimit), top.contains("entries"),
            top.allSatisfy({ layout($0) != nil })
        else { return false }
        return top.allSatisfy { name in
            guard let shape = layout(name) else { return false }
            if name == "entries" {
                let fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                defer { if fd >= 0 { close(fd) } }
                guard fd >= 0, CacheScan.names(in: fd, limit: evidenceLimit)?.isEmpty == false else { return false }
            }
            return matches(name, in: root, as: shape)
        }
    }

    /// The first folder (or the root) that others can write, as a path below the cache, or
    /// nil when the whole cache is private to this user.
    static func writableByOthers(in root: Int32) -> String? {
        let group = DiskCache.privateGroup(of: geteuid())
        var info = stat()
        guard fstat(root, &info) == 0, isPrivate(info, group) else { return "." }
        for name in names {
            if let found = writableByOthers(name, in: root, group) { return found }
        }
        return nil
    }

    /// Removes the format-1 cache in `root`, top-level name by name, each as ``layout(_:)`` says
    /// it must be; returns how many top-level names went. Leaves any name it does not
    /// recognise, and so the folder holding it.
    static func remove(in root: Int32) -> Int {
        let group = DiskCache.privateGroup(of: geteuid())
        return names.count(where: { name in layout(name).map { remove(name, in: root, as: $0, group) } ?? false })
    }

    // MARK: - The walk

    private static func matches(_ name: String, in parent: Int32, as shape: Shape) -> Bool {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        switch shape {
        case .file: return (info.st_mode & S_IFMT) == S_IFREG
        case .folder(let child):
            guard let fd = openFolder(name, in: parent, as: info) else { return false }
            defer { close(fd) }
            guard let names = CacheScan.names(in: fd, limit: evidenceLimit) else { return false }
            return names.allSatisfy { name in child(name).map { matches(name, in: fd, as: $0) } ?? false }
        }
    }

    private static func remove(_ name: String, in parent: Int32, as shape: Shape, _ group: gid_t?) -> Bool {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        guard case .folder(let child) = shape, (info.st_mode & S_IFMT) == S_IFDIR else {
            // A file, or a link or node where a folder was expected: the name itself goes.
            return (info.st_mode & S_IFMT) != S_IFDIR && unlinkat(parent, name, 0) == 0
        }
        guard let fd = openFolder(name, in: parent, as: info), isPrivate(info, group) else { return false }
        defer { close(fd) }
        for inner in CacheScan.names(in: fd, limit: Int.max) ?? [] {
            if let shape = child(inner) { _ = remove(inner, in: fd, as: shape, group) }
        }
        // Relative to the held parent: a link swapped in at `name` is not a directory, and stays.
        return unlinkat(parent, name, AT_REMOVEDIR) == 0
    }

    private static func writableByOthers(_ name: String, in parent: Int32, _ group: gid_t?) -> String? {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return nil
        }
        guard isPrivate(info, group) else { return name }
        guard let fd = openFolder(name, in: parent, as: info) else { return name }
        defer { close(fd) }
        for inner in CacheScan.names(in: fd, limit: evidenceLimit) ?? [] {
            if let found = writableByOthers(inner, in: fd, group) { return name + "/" + found }
        }
        return nil
    }

    /// The directory `name` in `parent`, open without following a link, when it is still
    /// the one `seen` describes (same device and inode).
    private static func openFolder(_ name: String, in parent: Int32, as seen: stat) -> Int32? {
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var held = stat()
        guard fstat(fd, &held) == 0, held.st_dev == seen.st_dev, held.st_ino == seen.st_ino else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Owned by this user and writable by no one else: not by every user, nor by a group
    /// other than the user's private one (``DiskCache/trustWarning`` judges the same way).
    private static func isPrivate(_ info: stat, _ group: gid_t?) -> Bool {
        info.st_uid == geteuid() && DiskCache.otherWriters(info, privateGroup: group, stickyProtects: false) == nil
    }

    private static func isHex(_ text: some StringProtocol, digits: Int) -> Bool {
        text.utf8.count == digits && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
