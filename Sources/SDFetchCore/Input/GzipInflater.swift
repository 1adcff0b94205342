internal import CZlib

/// Inflates a gzip file read from a descriptor (a list named `*.gz`), chunk by chunk, so a
/// compressed list streams like a plain one.
///
/// Several gzip members one after another (`cat a.gz b.gz`, bgzip) read as one stream, as
/// `gzip -d` reads them. Owns a heap-allocated `z_stream` (zlib checks that it never moves)
/// and its input buffer; the owner calls ``end()`` once. Not shared between threads.
struct GzipInflater {
    private static let inputBytes = 64 << 10

    private var file: DescriptorReader
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    private var isAtEndOfFile = false
    /// The current member ended; more input starts another one (or is the end).
    private var isBetweenMembers = false
    private var isInitialised = false
    /// Whether the file had any byte: an empty file is an empty list, not a broken one.
    private var hasInput = false

    init(_ file: DescriptorReader) {
        self.file = file
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: Self.inputBytes, alignment: 16)
    }

    /// Fills `buffer` with inflated bytes; 0 at the end of the file.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputReadError) -> Int {
        if !isInitialised {
            // 15 + 16: a gzip wrapper, the largest window.
            guard inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw InputReadError("zlib could not start (out of memory)")
            }
            isInitialised = true
        }
        stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = UInt32(buffer.count)
        while stream.pointee.avail_out == UInt32(buffer.count) {
            if stream.pointee.avail_in == 0 {
                if isAtEndOfFile { break }
                try refill()
                if stream.pointee.avail_in == 0 { break }
            }
            if isBetweenMembers {
                inflateReset(stream)
                isBetweenMembers = false
            }
            switch inflate(stream, Z_NO_FLUSH) {
            case Z_STREAM_END: isBetweenMembers = true
            case Z_OK, Z_BUF_ERROR: break
            default: throw InputReadError("not valid gzip data")
            }
        }
        let produced = buffer.count - Int(stream.pointee.avail_out)
        if produced == 0, isAtEndOfFile, hasInput, stream.pointee.avail_in == 0, !isBetweenMembers {
            throw InputReadError("the gzip data ends early (a truncated file)")
        }
        return produced
    }

    private mutating func refill() throws(InputReadError) {
        let count = try file.read(into: input)
        if count == 0 { isAtEndOfFile = true } else { hasInput = true }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = UInt32(count)
    }

    /// Frees zlib's state and the buffer.
    func end() {
        if isInitialised { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }
}
