internal import CSDFetchShims
import FoundationEssentials
import Glibc
import SDFetchCore
import Synchronization

/// Puts an image from the cache into the `-o` directory under an ``OutputNamer`` name. The
/// image comes open from ``DiskCache/openImage(for:)`` (the placer never builds a path into
/// the cache), and only when the output file is not already there.
///
/// By default the output file never shares its inode with the cache (README, "Output files"):
/// a reflink where the file system has them (`FICLONE`: btrfs, XFS), else an in-kernel copy
/// (`copy_file_range`), so editing an output file cannot touch the cache. `--link` hard-links
/// instead (instant, no space; the cache's own check still refuses an entry edited through
/// the link). A new file is written unnamed (`O_TMPFILE`) and linked to its name once
/// complete, so neither a reader nor a `kill -9` ever leaves half a file under a name. A
/// file that replaces another is renamed over it from a temporary name in DIR, which it
/// holds only complete and only between two system calls (see ``OutputTemporaries``: the
/// next run removes one a kill left); where the file system has no unnamed files, the
/// copy is written under that name. A link planted at the final name is replaced, never
/// followed: nothing is written outside DIR.
///
/// A copy takes the cache file's mtime, so a re-run leaves an output file alone when it
/// still has the image's size and time (a cache hit never changes it) and writes it afresh
/// otherwise. Called for many results at once (``OutputDelivery``, the last step of each
/// result): a warm hit's placement runs in its lookup's slice of the intake, a download's on
/// its child task. Its file calls stay on the calling task because they meet only the page
/// cache (SDFetchCore.docc, Pipeline, "System calls left on the tasks"); the reflink memo is
/// an `Atomic`.
struct OutputPlacer {
    let directory: String
    let isLinking: Bool
    /// How files are named (`--name`).
    let template: NameTemplate
    /// DIR, held open: a hit's look at its output file resolves one name, not a whole path.
    private let folder: Int32
    /// Set once `FICLONE` between the cache and DIR was refused (ext4, tmpfs): later copies
    /// go straight to `copy_file_range` instead of asking again for every image.
    private let reflinkRefused = ReflinkMemo()

    /// Creates DIR (and parents) if needed, and removes the temporary files runs killed
    /// while writing into it left there.
    init(directory: String, isLinking: Bool = false, template: NameTemplate = .standard) throws(OutputError) {
        var info = stat()
        if lstat(directory, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR && stat(directory, &info) == 0
            && (info.st_mode & S_IFMT) != S_IFDIR
        {
            throw OutputError(detail: "output directory \(directory) is a file, not a directory")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw OutputError(detail: "cannot create output directory \(directory): \(Self.errnoText())")
        }
        guard access(directory, W_OK) == 0 else {
            throw OutputError(detail: "output directory \(directory) is not writable: \(Self.errnoText())")
        }
        self.directory = directory
        self.isLinking = isLinking
        self.template = template
        folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 { OutputTemporaries.removeLeftovers(in: folder) }
    }

    /// Places the image `open` gives (``DiskCache/openImage(for:)``) at `relativePath` (a
    /// ``NameTemplate`` rendering: safe parts joined by `/`) in DIR and returns the new path.
    /// Folders on the way are created inside DIR and entered only as real directories,
    /// never through a link.
    ///
    /// - Parameters:
    ///   - placed: the image's size and the cache file's stamp when the file probably is
    ///     there already (a cache hit on a re-run): an output of that size and mtime is left
    ///     as it is, found with one `fstatat`, and `open` is not called. Nil for a new
    ///     download, which is written at once.
    ///   - open: opens the cache's image, only when it is to be copied or linked.
    func place(
        at relativePath: String, placed: (bytes: Int64, stamp: Int64)?,
        image open: () throws(CachedImage.Unreadable) -> CachedImage
    ) throws(OutputError) -> String {
        try inFolder(of: relativePath) { name, parent, target throws(OutputError) in
            try place(open, as: name, in: parent, target: target, placed: placed)
        }
    }

    /// Writes `bytes` (a resized copy, made from the cache's image) at `relativePath` in DIR,
    /// as ``place(at:placed:image:)`` writes a copy: complete before it has its name. Always
    /// written afresh: the caller has already looked at what is there (``existingFile(at:limit:)``).
    func write(_ bytes: [UInt8], at relativePath: String) throws(OutputError) -> String {
        try inFolder(of: relativePath) { name, parent, target throws(OutputError) in
            if try placeUnnamed(.encoded(bytes), as: name, in: parent, target: target) { return target }
            if try !placeNamed(.encoded(bytes), from: folder, as: name, in: parent, target: target) {
                _ = try placeNamed(.encoded(bytes), from: parent, as: name, in: parent, target: target)
            }
            return target
        }
    }

    /// Calls `body` with the last part of `relativePath` (a ``NameTemplate`` rendering: safe
    /// parts joined by `/`), the descriptor of the folder that holds it, and the whole path.
    /// Folders on the way are created inside DIR and entered only as real directories,
    /// never through a link.
    func inFolder<T>(
        of relativePath: String, _ body: (String, Int32, String) throws(OutputError) -> T
    ) throws(OutputError) -> T {
        var target = String()
        target.reserveCapacity(directory.utf8.count + relativePath.utf8.count + 1)
        target += directory
        if !directory.hasSuffix("/") { target += "/" }  // `-o t/` names `t/a.png`, not `t//a.png`
        target += relativePath
        // The default template names one file in DIR: no split on the warm-run path.
        if !relativePath.withUTF8Bytes({ $0.contains(UInt8(ascii: "/")) }) {
            precondition(!relativePath.isEmpty && !relativePath.hasPrefix("."), "NameTemplate makes safe parts")
            return try body(relativePath, folder, target)
        }
        let parts = relativePath.split(separator: "/").map(String.init)
        precondition(!parts.isEmpty && parts.allSatisfy { !$0.hasPrefix(".") }, "NameTemplate makes safe parts")
        let parent = try enter(parts.dropLast())
        defer { close(parent) }
        return try body(parts[parts.count - 1], parent, target)
    }

    /// The descriptor of DIR/`folders`, made as needed; every step refuses links.
    private func enter(_ folders: ArraySlice<String>) throws(OutputError) -> Int32 {
        var current = dup(folder)
        for name in folders {
            var next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT {
                _ = mkdirat(current, name, 0o755)
                next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let reason = Self.errnoText()
            close(current)
            guard next >= 0 else { throw OutputError(detail: "cannot enter \(name) under \(directory): \(reason)") }
            current = next
        }
        return current
    }

    private func place(
        _ open: () throws(CachedImage.Unreadable) -> CachedImage, as name: String, in parent: Int32, target: String,
        placed: (bytes: Int64, stamp: Int64)?
    ) throws(OutputError) -> String {
        if let placed, isPlaced(name, in: parent, placed) { return target }
        let image: CachedImage
        do throws(CachedImage.Unreadable) {
            image = try open()
        } catch {
            throw OutputError(detail: error.detail, isEntryGone: error.isGone)
        }
        if isLinking {
            // link(2) never follows or replaces anything already at the name.
            if image.link(as: name, in: parent) { return target }
            if errno == EEXIST {
                let temporary = OutputTemporaries.name()
                if image.link(as: temporary, in: folder) {
                    try rename(temporary, over: name, in: parent, target: target)
                    return target
                }
            }
            // Another file system than the cache's, or links refused: a copy.
        }
        let file = Content.cached(SourceFile(fd: image.descriptor, size: image.bytes, modified: image.modified))
        if try placeUnnamed(file, as: name, in: parent, target: target) { return target }
        // No unnamed files here (NFS, FAT): the copy is written under a temporary name in
        // DIR; beside the file when `parent` is another file system mounted inside DIR.
        if try !placeNamed(file, from: folder, as: name, in: parent, target: target) {
            lseek(image.descriptor, 0, SEEK_SET)
            _ = try placeNamed(file, from: parent, as: name, in: parent, target: target)
        }
        return target
    }

    /// Copies the cache's image into a new temporary file in `home` and renames it to `name` in
    /// `parent`. False when the rename would cross file systems (`EXDEV`); the temporary
    /// file is then gone.
    private func placeNamed(
        _ content: Content, from home: Int32, as name: String, in parent: Int32, target: String
    ) throws(OutputError) -> Bool {
        let temporary = OutputTemporaries.name()
        let output = openat(home, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else {
            throw OutputError(detail: "cannot create a file in \(directory): \(Self.errnoText())")
        }
        do throws(OutputError) {
            try copy(content, into: output)
        } catch {
            unlinkat(home, temporary, 0)
            throw error
        }
        guard renameat(home, temporary, parent, name) != 0 else { return true }
        let failure = errno
        unlinkat(home, temporary, 0)
        if failure == EXDEV && home != parent { return false }
        throw OutputError(detail: "cannot write \(target): \(String(cString: strerror(failure)))")
    }

    /// A copy made as an unnamed file (`O_TMPFILE`) and linked to `name` once complete: a
    /// half-written file never has a name, and a free name costs one directory operation
    /// where a temporary name and a rename cost two, which on ext4 after many deletions
    /// nearby is most of a cold run's time. A taken name is replaced by a rename from a
    /// temporary name the finished file gets just before. False when the file system has
    /// no `O_TMPFILE`.
    private func placeUnnamed(
        _ content: Content, as name: String, in parent: Int32, target: String
    )
        throws(OutputError) -> Bool
    {
        let output = openat(parent, ".", O_WRONLY | CSDFetch_O_TMPFILE() | O_CLOEXEC, 0o644)
        guard output >= 0 else { return false }
        defer { close(output) }
        try copy(content, into: output, closing: false)
        if UnnamedFileLink.link(output, as: name, in: parent) { return true }
        guard errno == EEXIST else { throw OutputError(detail: "cannot write \(target): \(Self.errnoText())") }
        // A run in another PID namespace may take our name for a dead process's and remove
        // it before the rename: the file is still ours to name again.
        for _ in 0..<3 {
            let temporary = OutputTemporaries.name()
            // In DIR, where the next run looks for leftovers; beside the file when `parent`
            // is another file system mounted inside DIR.
            var home = folder
            if !UnnamedFileLink.link(output, as: temporary, in: home) {
                guard errno == EXDEV, UnnamedFileLink.link(output, as: temporary, in: parent) else {
                    throw OutputError(detail: "cannot write \(target): \(Self.errnoText())")
                }
                home = parent
            }
            if renameat(home, temporary, parent, name) == 0 { return true }
            let failure = errno
            unlinkat(home, temporary, 0)
            guard failure == ENOENT else {
                throw OutputError(detail: "cannot write \(target): \(String(cString: strerror(failure)))")
            }
        }
        throw OutputError(detail: "cannot write \(target): its temporary file kept vanishing")
    }

    /// Renames DIR's `temporary` over `name` in `parent`; on failure removes it and throws.
    private func rename(_ temporary: String, over name: String, in parent: Int32, target: String) throws(OutputError) {
        guard renameat(folder, temporary, parent, name) != 0 else { return }
        let reason = Self.errnoText()
        unlinkat(folder, temporary, 0)
        throw OutputError(detail: "cannot write \(target): \(reason)")
    }

    /// Whether `name` already is the image: a regular file of its size and the cache
    /// file's stamp as mtime (the cache file itself under `--link`, or a copy made by an
    /// earlier run and not written since).
    private func isPlaced(_ name: String, in folder: Int32, _ placed: (bytes: Int64, stamp: Int64)) -> Bool {
        var existing = stat()
        guard fstatat(folder, name, &existing, AT_SYMLINK_NOFOLLOW) == 0, (existing.st_mode & S_IFMT) == S_IFREG
        else { return false }
        return Int64(existing.st_size) == placed.bytes && Int64(existing.st_mtim.tv_sec) == placed.stamp
            && existing.st_mtim.tv_nsec == 0
    }

    /// The open cache file a copy reads, with what one `fstat` said of it.
    private struct SourceFile {
        let fd: Int32
        let size: Int64
        let modified: timespec
    }

    /// What a new output file holds: the cache's image, or a resized copy made from it.
    private enum Content {
        case cached(SourceFile)
        case encoded([UInt8])
    }

    /// Fills the new file `output`. The cache's image: a reflink, else `copy_file_range`,
    /// else plain reads and writes (file systems that refuse both), and the source's mtime.
    /// Encoded bytes: written. Closes `output` unless told not to.
    private func copy(_ content: Content, into output: Int32, closing: Bool = true) throws(OutputError) {
        var failure: String?
        switch content {
        case .cached(let source):
            if !reflinked(source.fd, output) && !Self.copyInKernel(source.fd, output, size: source.size) {
                lseek(source.fd, 0, SEEK_SET)
                lseek(output, 0, SEEK_SET)
                ftruncate(output, 0)
                failure = Self.copyInUserSpace(source.fd, output)
            }
            var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), source.modified]  // atime: UTIME_OMIT
            _ = futimens(output, &times)
        case .encoded(let bytes):
            if !bytes.withUnsafeBytes({ FileIO.writeAll($0, to: output) }) {
                failure = "cannot write to \(directory): \(Self.errnoText())"
            }
        }
        if closing, close(output) != 0, failure == nil { failure = "cannot write to \(directory): \(Self.errnoText())" }
        if let failure { throw OutputError(detail: failure) }
    }

    /// `FICLONE`, unless this run already saw it refused.
    private func reflinked(_ input: Int32, _ output: Int32) -> Bool {
        guard !reflinkRefused.value.load(ordering: .relaxed) else { return false }
        if CSDFetch_ficlone(output, input) == 0 { return true }
        if [EOPNOTSUPP, EXDEV, EINVAL, ENOTTY].contains(errno) { reflinkRefused.value.store(true, ordering: .relaxed) }
        return false
    }

    /// `copy_file_range` of `size` bytes (the end, if the file grew meanwhile: no short
    /// output); false when the kernel refuses it for these files.
    private static func copyInKernel(_ input: Int32, _ output: Int32, size: Int64) -> Bool {
        var copied: Int64 = 0
        while copied < size {
            let wanted = max(1, Int(min(size - copied, 1 << 30)))
            guard
                let count = try? syscall(where: "copy_file_range", { CSDFetch_copy_file_range(input, output, wanted) })
            else { return false }
            if count == 0 { break }
            copied += Int64(count)
        }
        return true
    }

    /// Reads and writes to the end; a failure's description, or nil.
    private static func copyInUserSpace(_ input: Int32, _ output: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemCallError) in
                    try syscall(where: "read") { read(input, raw.baseAddress, raw.count) }
                }
            }
            let count: Int
            switch result {
            case .success(let read): count = read
            case .failure(let error): return "cannot read a cache file: \(error)"
            }
            if count == 0 { return nil }
            guard
                buffer.withUnsafeBytes({ FileIO.writeAll(UnsafeRawBufferPointer(rebasing: $0[..<count]), to: output) })
            else { return "cannot write to the output directory: \(Self.errnoText())" }
        }
    }

    private static func errnoText() -> String { SDFetchCore.errnoText() }
}

/// Shared by copies of one ``OutputPlacer``.
private final class ReflinkMemo: Sendable {
    let value = Atomic<Bool>(false)
}
