/// The fields of one HTTP response head that the fetcher uses, read from raw header lines.
///
/// curl hands every header line of every response (redirect hops and `1xx` included) to
/// the header callback, so a status line starts a new head. Parsing works on bytes: most
/// lines are none of the fields below and cost no `String` at all.
struct ResponseHead {
    /// Status code of the latest status line; 0 before one arrived.
    var status = 0
    /// `Content-Length` in bytes, when the server declared one.
    var contentLength: Int64?
    var etag: String?
    var lastModified: String?
    /// `Retry-After` in seconds (delta form or HTTP date).
    var retryAfter: Double?
    /// An `X-Robots-Tag` opts the image out of AI use for sdfetch (see ``RobotsTag``).
    var optsOut = false
    /// The base64 SHA-256 of a `Content-Digest` or `Repr-Digest` (RFC 9530) `sha-256` member.
    var digestSHA256: String?
    /// `Content-Encoding`, when the server sent one (a digest then covers the coded bytes).
    var contentEncoding: String?
    /// The first coding of any `Content-Encoding` or `Transfer-Encoding` line that the request
    /// did not offer (``ContentCoding``).
    var unofferedCoding: RefusedCoding?

    /// Whether the latest status is `2xx`, the only kind that carries an image.
    var isSuccess: Bool { (200...299).contains(status) }

    /// Reads one header line as curl delivers it, CRLF included.
    mutating func consume(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: "HTTP/".utf8) {
            self = ResponseHead()
            status = Self.statusCode(in: line)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])
        // Dispatch on length first: one comparison rejects almost every other header.
        switch name.count {
        case 4 where Self.matches(name, "etag"):
            etag = Self.text(value)
        case 11 where Self.matches(name, "retry-after"):
            retryAfter = RetryAfter.seconds(from: Self.text(value))
        case 11 where Self.matches(name, "repr-digest"), 14 where Self.matches(name, "content-digest"):
            digestSHA256 = ContentDigest.sha256Member(of: Self.text(value)) ?? digestSHA256
        case 12 where Self.matches(name, "x-robots-tag"):
            optsOut = optsOut || RobotsTag.optsOut(Self.text(value))
        case 16 where Self.matches(name, "content-encoding"):
            let coding = Self.text(value)
            contentEncoding = coding
            unofferedCoding = unofferedCoding ?? ContentCoding.unoffered(in: coding).map(RefusedCoding.content)
        case 17 where Self.matches(name, "transfer-encoding"):
            let coding = ContentCoding.unofferedTransfer(in: Self.text(value))
            unofferedCoding = unofferedCoding ?? coding.map(RefusedCoding.transfer)
        case 13 where Self.matches(name, "last-modified"):
            lastModified = Self.text(value)
        case 14 where Self.matches(name, "content-length"):
            contentLength = Self.integer(value)
        default:
            break
        }
    }

    // MARK: - Byte helpers

    /// The three digits after the first space of `HTTP/1.1 200 OK` or `HTTP/2 200`.
    private static func statusCode(in line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        var code = 0
        var digits = 0
        for byte in line[(space + 1)...] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 3 else { break }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits == 3 ? code : 0
    }

    /// ASCII case-insensitive comparison with a lower-case `name`.
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for (byte, lower) in zip(bytes, expected) where byte | 0x20 != lower {
            return false
        }
        return true
    }

    /// The value with surrounding blanks and the line end removed.
    private static func trimmed(_ value: UnsafeRawBufferPointer) -> Slice<UnsafeRawBufferPointer> {
        var slice = value[...]
        while let first = slice.first, isBlank(first) { slice = slice.dropFirst() }
        while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
        return slice
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func text(_ value: UnsafeRawBufferPointer) -> String {
        String(decoding: trimmed(value), as: UTF8.self)
    }

    /// A non-negative decimal that fits `Int64`, else nil (a bogus length is ignored, not trusted).
    private static func integer(_ value: UnsafeRawBufferPointer) -> Int64? {
        let digits = trimmed(value)
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var number: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            number = number * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return number
    }
}
