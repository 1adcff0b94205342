import Glibc

@testable import SDFetchCore

/// libFuzzer entry point over a cache directory's `FORMAT` file (``CacheFormat``): what
/// decides whether a directory is read, converted, refused or offered to `clean`, read
/// alone and as a read-only command opens the cache.
///
/// The first byte's bit 0 also gives the folder an `entries/` folder, the start of
/// format 1's evidence, read when `FORMAT` is missing (an empty input writes none).
@_cdecl("LLVMFuzzerTestOneInput")
public func cacheFormatFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    let folder = FuzzInput.folder
    unlink(folder + "/" + CacheFormat.fileName)
    if !input.rest.isEmpty { FuzzInput.writeFile(CacheFormat.fileName, input.rest) }
    if input.mode & 1 != 0 { mkdir(folder + "/entries", 0o700) } else { rmdir(folder + "/entries") }
    let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    precondition(fd >= 0, "cannot open \(folder)")
    defer { close(fd) }
    _ = CacheFormat.read(in: fd)
    // As every read-only command opens it (`stats`, `path`, `--offline`).
    if let cache = try? DiskCache(directory: folder, readOnly: true) { _ = cache.trustWarning }
    return 0
}
