internal import CSDFetchShims
import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// Both ways of naming an unnamed file give the name its bytes, and neither replaces a
/// name that is taken (a writer relies on that to never overwrite an entry unlocked).
@Suite("naming an unnamed file", .cleansUp)
struct UnnamedFileLinkTests {
    let directory = TemporaryDirectory("unnamed-link")

    @Test("the descriptor's own link and the /proc link both name the file; a taken name is refused")
    func bothWays() throws {
        let folder = open(directory.path, O_RDONLY | O_DIRECTORY)
        try #require(folder >= 0)
        defer { close(folder) }
        for (name, link) in [("own", UnnamedFileLink.link), ("proc", UnnamedFileLink.linkThroughProc)] {
            let fd = openat(folder, ".", O_RDWR | CSDFetch_O_TMPFILE(), 0o644)
            try #require(fd >= 0, "O_TMPFILE in \(directory.path)")
            defer { close(fd) }
            #expect(write(fd, name, name.utf8.count) == name.utf8.count)
            #expect(link(fd, name, folder))
            #expect(try String(contentsOfFile: directory.path + "/" + name, encoding: .utf8) == name)
            #expect(!link(fd, name, folder) && errno == EEXIST)
        }
    }
}
