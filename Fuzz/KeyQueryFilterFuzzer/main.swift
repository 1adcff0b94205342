@testable import SDFetchCore

/// libFuzzer entry point over ``KeyQueryFilter``: the input is up to four globs (lines of at
/// most 64 bytes, as `--key-ignore-query` takes them) and, after a NUL byte, a URL from the
/// list. The kept text must parse to the same key, hold no parameter the globs ignore, be
/// what a second pass keeps, and the request must still be the URL as parsed.
@_cdecl("LLVMFuzzerTestOneInput")
public func keyQueryFilterFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    let parts = input.bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return 0 }
    let patterns = parts[0].split(separator: 0x0A).prefix(4).map { String(decoding: $0.prefix(64), as: UTF8.self) }
    let filter = KeyQueryFilter(patterns: patterns)
    guard let key = try? URLKey(parsing: String(decoding: parts[1], as: UTF8.self)) else { return 0 }
    let filtered = filter.apply(to: key)
    precondition(filtered.request == key.request, "the request keeps every parameter")
    let again = filter.apply(to: filtered)
    precondition(again.string == filtered.string && again.digest == filtered.digest, "a second pass keeps it all")
    if let mark = filtered.string.firstIndex(of: "?") {
        for parameter in filtered.string[filtered.string.index(after: mark)...].split(separator: "&") {
            let name = parameter.prefix { $0 != "=" }
            precondition(name.isEmpty || !filter.ignores(name), "an ignored parameter was kept")
        }
    }
    return 0
}
