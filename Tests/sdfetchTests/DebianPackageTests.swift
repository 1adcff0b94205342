import Foundation
import SDFetchTestSupport
import Testing

/// Scripts/make-deb.sh's package metadata, read back with `dpkg-deb`: a tree staged the way
/// `make install` stages one, with a small system binary standing in for sdfetch so the
/// test needs no release build (dpkg-shlibdeps reads any ELF file's libraries the same way).
@Suite(
    "Debian package metadata", .cleansUp, .timeLimit(.minutes(1)),
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-shlibdeps"),
        "dpkg-dev is not installed"))
struct DebianPackageTests {
    let directory = TemporaryDirectory("deb")
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/make-deb.sh").path

    /// Stages `usr/` as `make install` would and packages it; returns the `.deb`'s path.
    private func package() async throws -> String {
        let stage = directory.appending("stage")
        let files = FileManager.default
        for folder in ["bin", "share/man/man1", "share/bash-completion/completions"] {
            try files.createDirectory(atPath: stage + "/usr/" + folder, withIntermediateDirectories: true)
        }
        try files.copyItem(atPath: "/bin/true", toPath: stage + "/usr/bin/sdfetch")
        try Data(".TH SDFETCH 1\n".utf8).write(to: URL(fileURLWithPath: stage + "/usr/share/man/man1/sdfetch.1"))
        try Data("complete -F _sdfetch sdfetch\n".utf8).write(
            to: URL(fileURLWithPath: stage + "/usr/share/bash-completion/completions/sdfetch"))
        let run = try await ProcessRun.launch(
            "/bin/sh", ["-c", "cd \"$1\" && exec \"$2\"", "sh", directory.path, Self.script],
            environment: ChildEnvironment.with([
                "SDFETCH_STAGE": stage, "SDFETCH_VERSION": "9.8.7", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
            ]))
        #expect(run.status == 0, "\(run.standardError)")
        return directory.appending("sdfetch_9.8.7_\(try await architecture()).deb")
    }

    private func architecture() async throws -> String {
        try await ProcessRun.launch("/usr/bin/dpkg", ["--print-architecture"]).standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the control file has Depends from dpkg-shlibdeps and an Installed-Size")
    func control() async throws {
        let info = try await ProcessRun.launch("/usr/bin/dpkg-deb", ["-I", try await package()]).standardOutput
        #expect(info.contains(" Package: sdfetch\n") && info.contains(" Version: 9.8.7\n"), "\(info)")
        // /bin/true links libc only: the version comes from the symbols it uses.
        #expect(info.contains(" Depends: libc6 (>= "), "\(info)")
        let size = info.components(separatedBy: "\n").first { $0.hasPrefix(" Installed-Size: ") }
        #expect(size.flatMap { Int($0.dropFirst(" Installed-Size: ".count)) }.map { $0 > 0 } == true, "\(info)")
        #expect(info.contains("md5sums"))
    }

    @Test("folders are 0755, and the copyright file, changelog and compressed man page are there")
    func contents() async throws {
        let deb = try await package()
        let listing = try await ProcessRun.launch("/usr/bin/dpkg-deb", ["-c", deb]).standardOutput
        let folders = listing.components(separatedBy: "\n").filter { $0.hasPrefix("d") }
        #expect(!folders.isEmpty && folders.allSatisfy { $0.hasPrefix("drwxr-xr-x root/root") }, "\(listing)")
        for file in ["usr/share/doc/sdfetch/copyright", "usr/share/doc/sdfetch/changelog.gz", "man1/sdfetch.1.gz"] {
            #expect(listing.contains(file), "\(file)")
        }
        let unpacked = directory.appending("unpacked")
        #expect(try await ProcessRun.launch("/usr/bin/dpkg-deb", ["-x", deb, unpacked]).status == 0)
        let copyright = try String(contentsOfFile: unpacked + "/usr/share/doc/sdfetch/copyright", encoding: .utf8)
        #expect(copyright.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"))
        #expect(
            copyright.contains("\nFiles: *\n") && copyright.contains("\nLicense: MIT\n Permission is hereby granted"))
    }
}
