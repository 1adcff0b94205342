import Foundation
import SDFetchCore
import SDFetchTestSupport
import Testing

/// The warning about a cache others can write (``DiskCache/trustWarning``): through the
/// world bit (sticky or not), a group that is not this user's own, or a folder above it.
@Suite("cache trust warning", .cleansUp)
struct CacheTrustTests {
    let directory = TemporaryDirectory("cache-trust")

    private func warning(_ path: String) throws -> String? {
        try DiskCache(directory: path).trustWarning
    }

    @Test("a cache of this user's, under folders only this user and root can write, draws no warning")
    func privateCache() throws {
        #expect(try warning(directory.appending("plain")) == nil)
    }

    @Test("a world-writable cache is named even with the sticky bit, as root's 1777 cache is")
    func stickyCache() throws {
        let path = directory.appending("sticky")
        _ = try DiskCache(directory: path)
        chmod(path, 0o1777)
        defer { chmod(path, 0o755) }
        #expect(try warning(path) == "the cache directory is writable by every user (mode 1777)")
    }

    @Test("a folder above the cache that others can write is named; a sticky one (/tmp) is not")
    func writableParent() throws {
        let parent = directory.appending("shared")
        let path = parent + "/cache"
        _ = try DiskCache(directory: path)
        chmod(parent, 0o777)
        defer { chmod(parent, 0o755) }
        let resolved = try #require(realpath(parent, nil))
        defer { free(resolved) }
        #expect(
            try warning(path)
                == "its parent folder \(String(cString: resolved)) is writable by every user (mode 777)")
        chmod(parent, 0o1777)
        #expect(try warning(path) == nil)
    }

    @Test("a cache writable through another group is named; through this user's private group it is not")
    func groupWritable() throws {
        // Giving a folder to another group takes root (whose private group is root).
        guard geteuid() == 0 else { return }
        let path = directory.appending("group")
        _ = try DiskCache(directory: path)
        chmod(path + "/index", 0o775)
        #expect(try warning(path) == nil)
        chown(path + "/index", 0, 65534)
        #expect(try warning(path) == "its index/ folder is writable by group 65534 (mode 775)")
        chown(path + "/index", 0, 0)
        let parent = directory.appending("group-parent")
        _ = try DiskCache(directory: parent + "/cache")
        chmod(parent, 0o775)
        chown(parent, 0, 65534)
        #expect(try warning(parent + "/cache")?.contains("is writable by group 65534 (mode 775)") == true)
    }
}
