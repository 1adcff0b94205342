import FoundationEssentials
import Glibc

extension DiskCache {
    /// Why this cache directory cannot be trusted more than the least trusted user who can
    /// write it, or nil when only this user (and root) can: whoever can write a cache feeds
    /// images to every run that reads it, as `cached` (<doc:Security>). As ssh checks a key
    /// file and its folders:
    ///
    /// - the directory and its `entries/`, `content/` and `index/` folders must be this
    ///   user's and writable by no one else: not by every user, sticky bit or not (the
    ///   sticky bit keeps others from replacing files, not from adding entries), and not by
    ///   a group other than this user's own private group (Debian makes one per user, so
    ///   group-writable folders of it are the norm);
    /// - every folder above it must be this user's or root's and, unless sticky (`/tmp`),
    ///   writable by no one else either: whoever can write a parent can rename the cache
    ///   away and put their own in its place.
    public var trustWarning: String? {
        let userID = geteuid()
        let privateGroup = Self.privateGroup(of: userID)
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
            if let writers = Self.otherWriters(info, privateGroup: privateGroup, stickyProtects: false) {
                return "\(place) is writable by \(writers)"
            }
        }
        return parentWarning(userID: userID, privateGroup: privateGroup)
    }

    /// The first folder above the cache that someone else can write, or nil.
    private func parentWarning(userID: uid_t, privateGroup: gid_t?) -> String? {
        guard let resolved = realpath(directory, nil) else { return nil }
        var path = String(cString: resolved)
        free(resolved)
        // At most as many steps as the path has folders.
        for _ in 0..<4096 {
            guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
            path = slash == path.startIndex ? "/" : String(path[..<slash])
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            if info.st_uid != userID, info.st_uid != 0 {
                return "its parent folder \(path) is owned by user \(info.st_uid)"
            }
            if let writers = Self.otherWriters(info, privateGroup: privateGroup, stickyProtects: true) {
                return "its parent folder \(path) is writable by \(writers)"
            }
        }
        return nil
    }

    /// Who other than the owner can write the folder `info` describes (`every user (mode
    /// 1777)`), or nil. `stickyProtects`: the sticky bit is enough, as for a parent folder
    /// whose names others cannot rename.
    static func otherWriters(_ info: stat, privateGroup: gid_t?, stickyProtects: Bool) -> String? {
        let mode = "mode \(String(info.st_mode & 0o7777, radix: 8))"
        if stickyProtects, info.st_mode & S_ISVTX != 0 { return nil }
        if info.st_mode & S_IWOTH != 0 { return "every user (\(mode))" }
        if info.st_mode & S_IWGRP != 0, info.st_gid != privateGroup {
            return "group \(info.st_gid) (\(mode))"
        }
        return nil
    }

    /// This user's private group: the group named like the user with no other member, as
    /// Debian's `adduser` makes one per user (root's is `root`); nil when there is none.
    static func privateGroup(of userID: uid_t) -> gid_t? {
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        var user = passwd()
        var found: UnsafeMutablePointer<passwd>?
        guard getpwuid_r(userID, &user, &buffer, buffer.count, &found) == 0, found != nil,
            let userName = user.pw_name.map({ String(cString: $0) })
        else { return nil }
        let groupID = user.pw_gid
        var groupBuffer = [CChar](repeating: 0, count: 64 << 10)
        var group = group()
        var foundGroup: UnsafeMutablePointer<group>?
        guard getgrgid_r(groupID, &group, &groupBuffer, groupBuffer.count, &foundGroup) == 0, foundGroup != nil,
            group.gr_name.map({ String(cString: $0) }) == userName
        else { return nil }
        var member = group.gr_mem
        while let name = member?.pointee {
            if String(cString: name) != userName { return nil }
            member = member?.advanced(by: 1)
        }
        return groupID
    }
}
