import Glibc

/// Byte searches in a rendered line. JSON lines are patched by their ASCII member names,
/// which needs no `Character` semantics (a grapheme walk per character: most of the time a
/// warm run of repeated rows spent).
enum UTF8Search {
    /// The byte offset of the first `needle` in `text`, or nil.
    static func firstOffset(of needle: StaticString, in text: String) -> Int? {
        var text = text
        return text.withUTF8 { haystack -> Int? in
            let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
            guard let first = pattern.first, haystack.count >= pattern.count else { return nil }
            var start = 0
            while start <= haystack.count - pattern.count {
                // memchr to the next candidate: the search runs at memory speed past text.
                guard
                    let hit = memchr(
                        haystack.baseAddress! + start, Int32(first), haystack.count - pattern.count + 1 - start)
                else { return nil }
                let offset = UnsafeRawPointer(haystack.baseAddress!).distance(to: UnsafeRawPointer(hit))
                if memcmp(haystack.baseAddress! + offset, pattern.baseAddress!, pattern.count) == 0 { return offset }
                start = offset + 1
            }
            return nil
        }
    }

    /// The index `offset` bytes into `text` (an offset found by ``firstOffset(of:in:)``).
    static func index(_ offset: Int, in text: String) -> String.Index {
        text.utf8.index(text.utf8.startIndex, offsetBy: offset)
    }
}
