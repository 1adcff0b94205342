import SDFetchCore

/// Names `-o DIR` files from URLs (README, "Output files").
///
/// The name is the URL's last path segment, percent-decoded, made safe, stripped of an
/// image extension, then `-HHHHHHHH` (the first 32 bits of the key's digest) and the
/// sniffed format's extension: `/a/x.png` -> `x-1a2b3c4d.png`.
///
/// The hash suffix is always added, not only on collision: a name then depends on the
/// URL alone, never on which URL finished first or what DIR already holds, so every
/// re-run (and every shard on another machine) agrees on it, and two keys never share
/// a file unless 32 bits of SHA-256 and the whole stem collide.
enum OutputNamer {
    /// Longest name in bytes, suffix and extension included.
    static let maxBytes = 200
    /// Stem used when the URL has no usable last segment (`http://host/`, `/..`).
    static let fallbackStem = "image"

    /// Extensions removed from the stem so `x.jpeg` sniffed as JPEG becomes `x-….jpg`, not `x.jpeg-….jpg`.
    private static let imageExtensions: [[UInt8]] =
        (ImageFormat.allCases.map { String($0.fileExtension.dropFirst()) } + ["jpeg", "jpe", "jfif", "tif"]).map {
            Array($0.utf8)
        }

    /// The file name for `key` holding an image of `format`: no `/`, no control character, no leading `.`.
    static func name(for key: URLKey, format: ImageFormat?) -> String {
        let fileExtension = format?.fileExtension ?? ""
        if let name = plainName(for: key, fileExtension: fileExtension) { return name }
        let suffix = "-" + key.digest.shortHex + fileExtension
        return truncate(sanitise(stem(of: lastSegment(of: key.string))), toBytes: maxBytes - suffix.utf8.count) + suffix
    }

    /// The name of a URL whose last segment needs no decoding or escaping (printable ASCII
    /// without `%` or `\`, not starting with a dot), written from the URL's bytes in one
    /// pass: most URLs, and every hit of a warm `-o` run. Nil sends it down the general path.
    private static func plainName(for key: URLKey, fileExtension: String) -> String? {
        key.string.withUTF8Bytes { url -> String? in
            guard let segment = URLSpans.lastSegment(in: url), !segment.isEmpty,
                url[segment.lowerBound] != UInt8(ascii: ".")
            else {
                return nil
            }
            var lastDot = -1
            for index in segment {
                let byte = url[index]
                guard byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "\\") else {
                    return nil
                }
                if byte == UInt8(ascii: ".") { lastDot = index }
            }
            let stemEnd =
                lastDot > segment.lowerBound && isImageExtension(url[(lastDot + 1)..<segment.upperBound])
                ? lastDot : segment.upperBound
            let stem = UnsafeBufferPointer(rebasing: url[segment.lowerBound..<stemEnd])
            return fileExtension.withUTF8Bytes { ext -> String? in
                let length = stem.count + 9 + ext.count
                guard length <= maxBytes else { return nil }
                return String(unsafeUninitializedCapacity: length) { out in
                    _ = UnsafeMutableBufferPointer(rebasing: out[0...]).initialize(from: stem)
                    out[stem.count] = UInt8(ascii: "-")
                    key.digest.writeHex(digits: 8, into: UnsafeMutableBufferPointer(rebasing: out[(stem.count + 1)...]))
                    _ = UnsafeMutableBufferPointer(rebasing: out[(stem.count + 9)...]).initialize(from: ext)
                    return length
                }
            }
        }
    }

    /// Whether `bytes` spell an image extension in any ASCII letter case.
    private static func isImageExtension(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        imageExtensions.contains { candidate in
            candidate.count == bytes.count
                && zip(candidate, bytes).allSatisfy { expected, byte in
                    expected == (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
                }
        }
    }

    /// The last segment percent-decoded, without an image extension or leading dots;
    /// ``fallbackStem`` when nothing is left. Not yet made safe.
    static func stem(of segment: Substring) -> String {
        var stem = percentDecode(segment)
        if let dot = stem.lastIndex(of: "."),
            stem[stem.index(after: dot)...].withUTF8Bytes({ isImageExtension($0[...]) })
        {
            stem = String(stem[..<dot])
        }
        while stem.hasPrefix(".") { stem.removeFirst() }
        return sanitise(stem).isEmpty ? fallbackStem : stem
    }

    /// The segments of the URL's path (query excluded); the last one may be empty.
    static func pathSegments(of url: String) -> [Substring] {
        guard let spans = URLSpans(url), !spans.path.isEmpty else { return [""] }
        let path = url[url.utf8.index(after: spans.path.lowerBound)..<spans.path.upperBound]
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // Empty folders (`a//b`) vanish; the last segment stays, even when empty.
        return segments.dropLast().filter { !$0.isEmpty } + [segments.last ?? ""]
    }

    /// One path part made safe: ``sanitise``d, no leading dot (so never `.` or `..`), not
    /// empty, at most `limit` bytes.
    static func safePart(_ text: String, limit: Int) -> String {
        var part = sanitise(text)
        while part.hasPrefix(".") { part.replaceSubrange(part.startIndex...part.startIndex, with: "_") }
        if part.isEmpty { part = "_" }
        return truncate(part, toBytes: limit)
    }

    /// The path part after the last `/`, query excluded (the key has no fragment).
    static func lastSegment(of url: String) -> Substring {
        URLSpans(url)?.lastSegment(in: url) ?? ""
    }

    /// `%2f` -> `/` (made safe later), invalid escapes kept literally, bytes read as UTF-8.
    static func percentDecode(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Replaces `/`, `\` and every character ``Escaping`` calls unsafe with `_`.
    static func sanitise(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar == "/" || scalar == "\\" || Escaping.isUnsafe(scalar) ? "_" : scalar)
        }
        return String(scalars)
    }

    /// The longest prefix of whole characters that fits `limit` UTF-8 bytes.
    static func truncate(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > limit { break }
            result.append(character)
            used += size
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
