internal import CZlib

/// Inflates a PNG's concatenated IDAT payloads into a small scratch buffer, keeping only
/// the count of bytes produced, and refuses the stream the moment that count passes the
/// size the header implies.
///
/// Owns a heap-allocated `z_stream` (zlib checks that the stream never moves) and the
/// scratch buffer; the owner must call ``end()`` exactly once. Not shared between threads.
struct ImageDataInflater {
    /// Output is discarded; 64 KiB keeps the calls into zlib few without costing cache.
    private static let scratchSize = 64 << 10
    /// How many output bytes pass between two looks at the task's cancellation.
    private static let cancellationStride: UInt64 = 8 << 20

    private let stream: UnsafeMutablePointer<z_stream>
    private let scratch: UnsafeMutableRawPointer
    private let expectedBytes: UInt64
    private var producedBytes: UInt64 = 0
    private var nextCancellationCheck: UInt64 = cancellationStride
    private var isInitialised = false
    private(set) var hasEnded = false

    init(expectedBytes: UInt64) {
        self.expectedBytes = expectedBytes
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        scratch = .allocate(byteCount: Self.scratchSize, alignment: 16)
    }

    /// Feeds one IDAT payload; a failure when the stream is broken or grows too large.
    /// Data after the stream's end is ignored (libpng only warns about it).
    mutating func feed(_ payload: UnsafeRawBufferPointer) -> FetchFailure? {
        guard !hasEnded, payload.count > 0 else { return nil }
        if !isInitialised {
            guard inflateInit_(stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                return FetchFailure(.io, "png structure: zlib could not start (out of memory)")
            }
            isInitialised = true
            // The stream's Adler-32 guards bytes every IDAT's CRC-32 has already checked, and
            // Chromium skips it too (PNG_IGNORE_ADLER32): a quarter of the walk's time.
            inflateValidate(stream, 0)
        }
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: payload.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(payload.count)
        while true {
            stream.pointee.next_out = scratch.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(Self.scratchSize)
            let status = inflate(stream, Z_NO_FLUSH)
            producedBytes += UInt64(Self.scratchSize - Int(stream.pointee.avail_out))
            if producedBytes > expectedBytes {
                return PNGStructure.corrupt("image data inflates past the \(expectedBytes) bytes IHDR declares")
            }
            switch status {
            case Z_STREAM_END:
                hasEnded = true
                return nil
            case Z_OK:
                break
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                return nil  // all of this chunk consumed; the stream continues in the next IDAT
            default:
                return PNGStructure.corrupt("image data is not a valid zlib stream")
            }
            if producedBytes >= nextCancellationCheck {
                nextCancellationCheck += Self.cancellationStride
                if Interruption.isRequested { return FetchFailure(.interrupted, "png verification cancelled") }
            }
            if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return nil }
        }
    }

    /// The verdict at IEND: the stream must have ended with exactly the declared size.
    func finish() -> Result<Void, FetchFailure> {
        guard hasEnded else { return .failure(PNGStructure.corrupt("image data ends before its zlib stream does")) }
        guard producedBytes == expectedBytes else {
            return .failure(
                PNGStructure.corrupt("image data holds \(producedBytes) of the \(expectedBytes) bytes IHDR declares"))
        }
        return .success(())
    }

    /// Frees zlib's state and the buffers.
    func end() {
        if isInitialised { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }
}
