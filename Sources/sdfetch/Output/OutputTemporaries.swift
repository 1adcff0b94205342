import FoundationEssentials
import Glibc
import SDFetchCore

/// The names `-o` gives a file for the instant before it takes its final name
/// (`.sdfetch-PID-N.tmp`, in DIR itself), and the removal of those a killed run left.
///
/// A file gets such a name only when an existing output file must be replaced (a rename is
/// the only atomic replacement) or when the file system has no unnamed files (`O_TMPFILE`:
/// NFS, FAT); otherwise nothing has a name before it is complete. (A folder inside DIR
/// that is another file system's mount point gets them itself: a rename cannot leave a file
/// system.) A `kill -9` in that
/// instant leaves the name behind, so each run with `-o` first removes the names of
/// processes that no longer exist. Only names of exactly this shape, of regular files, are
/// touched: DIR is the user's. A live process's names are kept, ours included, which
/// also keeps a killed run's names whose PID happens to be alive again (the next run
/// removes them). A process in another PID namespace writing into the same DIR looks dead:
/// ``OutputPlacer`` links its file again when its temporary name vanished.
enum OutputTemporaries {
    static let prefix = ".sdfetch-"

    /// A fresh temporary name for this process.
    static func name() -> String { FileIO.temporaryName(prefix: prefix) }

    /// The process id in `name` when it is one of ours (`.sdfetch-<pid>-<digits>.tmp`).
    static func owner(of name: String) -> pid_t? {
        guard name.hasPrefix(prefix), name.hasSuffix(FileIO.temporarySuffix) else { return nil }
        let middle = name.dropFirst(prefix.count).dropLast(FileIO.temporarySuffix.count)
        let parts = middle.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            UInt64(parts[1]) != nil, let pid = pid_t(parts[0]), pid > 0
        else { return nil }
        return pid
    }

    /// Removes from the folder open as `folder` the temporary files of processes that are
    /// gone; returns how many. One pass over the folder's names (`readdir`), before the
    /// run places anything there.
    @discardableResult
    static func removeLeftovers(in folder: Int32) -> Int {
        let copy = dup(folder)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return 0
        }
        defer { closedir(stream) }
        var leftovers: [String] = []
        while let entry = readdir(stream) {
            // The first byte is '.' for every name of ours: most names end the check there.
            guard UInt8(bitPattern: entry.pointee.d_name.0) == UInt8(ascii: ".") else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = owner(of: name), !isAlive(pid) else { continue }
            leftovers.append(name)
        }
        return leftovers.filter { name in
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else {
                return false
            }
            return unlinkat(folder, name, 0) == 0
        }.count
    }

    /// Whether process `pid` exists (one we may not signal exists too).
    private static func isAlive(_ pid: pid_t) -> Bool {
        pid == getpid() || kill(pid, 0) == 0 || errno == EPERM
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
