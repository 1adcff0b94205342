import Foundation
import SDFetchCore

/// Puts a copy of a cache file into the `-o` directory under an ``OutputNamer`` name.
///
/// Hard link when the directory is on the cache's file system (instant, no extra space),
/// a copy otherwise (`EXDEV`) or when linking is refused. A link to a free name appears
/// whole at once; anything else (a copy, or replacing an existing file) is made under a
/// temporary name inside DIR and renamed over the final name, so a reader never sees half
/// a file, and a symlink planted at the final name is replaced, never followed: nothing
/// is written outside DIR. Runs on the event consumer only; blocking file I/O.
struct OutputPlacer {
    let directory: String

    /// Creates DIR (and parents) if needed.
    init(directory: String) throws(OutputError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw OutputError(detail: "cannot create output directory \(directory): \(error.localizedDescription)")
        }
        guard access(directory, W_OK) == 0 else {
            throw OutputError(detail: "output directory \(directory) is not writable: \(Self.errnoText())")
        }
        self.directory = directory
    }

    /// Places `cacheFile` as `name` in DIR and returns the new path.
    ///
    /// - Parameter isLikelyPlaced: the file probably is there already (a cache hit on a
    ///   re-run): look before linking. Otherwise (a new download) link first, a single call
    ///   when the name is free. Either order gives the same result, only the cost differs.
    func place(_ cacheFile: String, as name: String, isLikelyPlaced: Bool) throws(OutputError) -> String {
        precondition(!name.utf8.contains(UInt8(ascii: "/")) && !name.hasPrefix("."), "OutputNamer makes plain names")
        let target = directory + "/" + name
        // link(2) never follows or replaces anything already at the name.
        if !isLikelyPlaced && link(cacheFile, target) == 0 { return target }
        var existing = stat()
        var source = stat()
        if lstat(target, &existing) == 0 {
            if stat(cacheFile, &source) == 0, existing.st_dev == source.st_dev, existing.st_ino == source.st_ino {
                return target  // a re-run: already this very file
            }
        } else if isLikelyPlaced && link(cacheFile, target) == 0 {
            return target
        }
        let temporary = directory + "/.sdfetch-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        if link(cacheFile, temporary) != 0 {
            try copy(cacheFile, to: temporary)
        }
        guard rename(temporary, target) == 0 else {
            let reason = Self.errnoText()
            unlink(temporary)
            throw OutputError(detail: "cannot write \(target): \(reason)")
        }
        return target
    }

    private func copy(_ source: String, to temporary: String) throws(OutputError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw OutputError(detail: "cannot read \(source): \(Self.errnoText())") }
        defer { close(input) }
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw OutputError(detail: "cannot create \(temporary): \(Self.errnoText())") }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: String?
        while failure == nil {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { failure = "cannot read \(source): \(Self.errnoText())" }
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 {
                    failure = "cannot write \(temporary): \(Self.errnoText())"
                    break
                }
                offset += written
            }
        }
        if close(output) != 0, failure == nil { failure = "cannot write \(temporary): \(Self.errnoText())" }
        if let failure {
            unlink(temporary)
            throw OutputError(detail: failure)
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)).lowercased() }
}

/// The `-o` directory or a file in it could not be written.
struct OutputError: Error {
    let detail: String
}
