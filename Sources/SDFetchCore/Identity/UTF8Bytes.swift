extension StringProtocol {
    /// Calls `body` with the text's UTF-8 bytes in one buffer: a native string or substring
    /// lends its storage, anything else is copied once.
    ///
    /// Why: walking `utf8` index by index costs tens of instructions a byte, and the warm
    /// path scans every URL several times (parse, name, print); a buffer costs one or two.
    @inlinable
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        return try Array(utf8).withUnsafeBufferPointer(body)
    }
}
