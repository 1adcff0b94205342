import FoundationEssentials
import Glibc

extension DiskCache {
    /// Why this cache directory cannot be trusted more than the least trusted user who can
    /// write it, or nil when only this user can: owned by someone else, or writable by
    /// others (the world-writable bit, without the sticky bit that keeps others from
    /// replacing files they do not own). Whoever can write a cache feeds images to every
    /// run that reads it, as `cached` (<doc:Security>). Checked on the directory and
    /// its `entries/`, `content/` and `index/` folders, as ssh checks a key file and its folders.
    ///
    /// Group-writable folders are not named: Debian's user-private groups make them the
    /// norm, and a shared group cache is a deliberate choice.
    public var trustWarning: String? {
        let userID = geteuid()
        for (name, fd) in [
            (".", root.value), ("entries", entries.parent.value), ("content", contents.parent.value),
            ("index", index.folder.value),
        ] {
            var info = stat()
            guard fstat(fd, &info) == 0 else { continue }
            let place = name == "." ? "the cache directory" : "its \(name)/ folder"
            if info.st_uid != userID {
                return "\(place) is owned by user \(info.st_uid), not by this user (\(userID))"
            }
            if info.st_mode & S_IWOTH != 0, info.st_mode & S_ISVTX == 0 {
                return "\(place) is writable by every user (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
        }
        return nil
    }
}
