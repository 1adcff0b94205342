@testable import SDFetchCore

/// libFuzzer entry point over URL identity (<doc:Fetching#URL-identity>): an input line as
/// text (``LineSplitter/text(of:)``, which keeps bytes that are not UTF-8 apart), its key
/// (``URLKey``: what is sent, the cache key, the digest that names files and picks shards),
/// and the password masking every printed and stored form goes through (``Redaction``).
///
/// Checked, not only run: a key parses again to itself (identity is stable), unless
/// percent-encoding took it past ``URLKey/maxLength``.
@_cdecl("LLVMFuzzerTestOneInput")
public func urlFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    let text = LineSplitter.text(of: input.bytes)
    _ = Redaction.masked(text)
    guard let key = try? URLKey(parsing: text) else { return 0 }
    _ = key.digest.hex
    let redacted = key.redacted
    guard key.string.utf8.count <= URLKey.maxLength else { return 0 }
    guard let again = try? URLKey(parsing: key.string) else {
        fatalError("the key \(redacted) of a valid URL does not parse again")
    }
    if again != key { fatalError("the key \(redacted) parses again to another key, \(again.redacted)") }
    return 0
}
