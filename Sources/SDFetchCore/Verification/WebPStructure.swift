/// The `structure` check of a WebP (<doc:Verification#Levels>): the RIFF size fits the data
/// and every chunk inside it, walked by its size field (padded to even, RFC 9649 section
/// 2.2), ends inside the RIFF payload. Bytes after the RIFF payload are ignored, as libwebp
/// does; the bitstreams themselves are checked by the `full` level's decode (``WebPVerifier``).
///
/// Stateless; safe from any thread.
enum WebPStructure {
    /// A failure, or nil when the RIFF layout is sound.
    static func check(_ data: UnsafeRawBufferPointer) -> FetchFailure? {
        guard let riffSize = data.uint32LE(at: 4), data.matches("WEBP", at: 8) else {
            return corrupt("riff header unreadable")
        }
        let end = 8 + Int(riffSize)
        guard end <= data.count else { return corrupt("data shorter than its riff header declares") }
        guard end >= 20 else { return corrupt("riff payload holds no chunk") }
        var offset = 12
        while offset < end {
            guard offset + 8 <= end, let size = data.uint32LE(at: offset + 4) else {
                return corrupt("chunk header past the riff payload")
            }
            let payloadEnd = offset + 8 + Int(size)
            guard payloadEnd <= end else { return corrupt("chunk past the riff payload") }
            // The pad byte of an odd chunk may be missing at the very end; nothing follows.
            offset = payloadEnd + Int(size & 1)
        }
        return nil
    }

    private static func corrupt(_ reason: String) -> FetchFailure {
        FetchFailure(.corruptImage, "webp structure: \(reason)")
    }
}
