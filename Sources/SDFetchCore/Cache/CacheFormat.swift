import FoundationEssentials
import Glibc

/// The on-disk format's version, kept in the file `FORMAT` at the top of a cache directory.
///
/// A directory is read when it says format 4, or format 2 or 3, whose files format 4 reads
/// as they are (an index of log lines is a bucket file without a table; an entry file with
/// no `content/` name is an entry that shares nothing): the first process that writes to
/// such a directory rewrites `FORMAT`, and compaction writes the tables.
/// Format 1 (metadata in extended attributes, no `FORMAT` file) and any later format are
/// named in the error, never misread; `clean` removes a format-1 cache. Since that removal
/// is recursive, format 1 is recognised only on evidence everywhere (``FormatOneCache``):
/// a user's folder that merely has an `entries/` inside is "not an sdfetch cache", and left
/// alone.
public enum CacheFormat: Equatable, Sendable {
    /// An empty or new directory: the current format may be written.
    case none
    case current
    /// Format 2 or 3: read as it is, converted by the first write (see the type's documentation).
    case previous
    /// Another version: 1 for the extended-attribute layout, else what `FORMAT` says.
    case other(String)

    public static let version = 4
    /// The formats converted in place: their files are valid files of this one.
    static let previousVersions = ["2", "3"]
    static let fileName = "FORMAT"
    static let text =
        "sdfetch cache format \(version)\n"
        + "see Sources/SDFetchCore/SDFetchCore.docc/OnDiskFormat.md in sdfetch's repository\n"

    /// The names format 1 used at the top of a cache directory, for ``DiskCache/removeFormatOne(directory:dryRun:)``.
    public static let formatOneNames = FormatOneCache.names

    /// What the directory open as `directory` holds.
    static func read(in directory: Int32) -> CacheFormat {
        var info = stat()
        if fstatat(directory, fileName, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            guard fstatat(directory, "entries", &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .none }
            return FormatOneCache.isPresent(in: directory) ? .other("1") : .other(notACache)
        }
        let fd = SafeOpen.file(fileName, in: directory, flags: O_RDONLY)
        guard fd >= 0 else { return .other("unknown (\(fileName) is not a regular file)") }
        defer { close(fd) }
        let bytes = SafeOpen.readAll(fd, limit: 4096) ?? []
        let firstLine = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
        let prefix = "sdfetch cache format "
        guard firstLine.hasPrefix(prefix) else { return .other("unknown (\(firstLine.prefix(40)))") }
        let version = String(firstLine.dropFirst(prefix.count))
        if version == String(Self.version) { return .current }
        return previousVersions.contains(version) ? .previous : .other(version)
    }

    /// What a folder with `entries/` but none of format 1's evidence is called.
    static let notACache = "unknown (not an sdfetch cache: no FORMAT file)"
}
