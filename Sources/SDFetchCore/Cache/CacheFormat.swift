import FoundationEssentials
import Glibc

/// The on-disk format's version, kept in the file `FORMAT` at the top of a cache directory.
///
/// A directory is read only when it says format 2. Format 1 (before this one: metadata in
/// extended attributes, no `FORMAT` file, recognised by its `entries/` folder) and any
/// later format are named in the error, never misread; `clean` removes a format-1 cache.
public enum CacheFormat: Equatable, Sendable {
    /// An empty or new directory: format 2 may be written.
    case none
    case current
    /// Another version: 1 for the extended-attribute layout, else what `FORMAT` says.
    case other(String)

    public static let version = 2
    static let fileName = "FORMAT"
    static let text = "sdfetch cache format \(version)\nsee README.md, \"Cache format\", of sdfetch\n"

    /// The names format 1 used at the top of a cache directory, for ``DiskCache/removeOtherFormat()``.
    static let formatOneNames = ["entries", "failed", "tmp", "locks", "within-cap"]

    /// What the directory open as `directory` holds.
    static func read(in directory: Int32) -> CacheFormat {
        var info = stat()
        if fstatat(directory, fileName, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            return fstatat(directory, "entries", &info, AT_SYMLINK_NOFOLLOW) == 0 ? .other("1") : .none
        }
        let fd = SafeOpen.file(fileName, in: directory, flags: O_RDONLY)
        guard fd >= 0 else { return .other("unknown (\(fileName) is not a regular file)") }
        defer { close(fd) }
        let bytes = SafeOpen.readAll(fd, limit: 4096) ?? []
        let firstLine = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
        let prefix = "sdfetch cache format "
        guard firstLine.hasPrefix(prefix) else { return .other("unknown (\(firstLine.prefix(40)))") }
        let version = String(firstLine.dropFirst(prefix.count))
        return version == String(Self.version) ? .current : .other(version)
    }
}
