import CZlib
import Glibc

@testable import SDFetchCore

/// libFuzzer entry point over tabular lists (<doc:Fetching#Input>): CSV, TSV and JSON
/// Lines, plain and gzipped, split into rows as a run reads them (``RowSplitter`` over
/// ``SourceBytes``) and counted as the progress bar's total is (``RowCounter``), and plain
/// lists through ``LineSplitter``.
///
/// The first byte picks: bits 0-1 the format (lines, CSV, TSV, JSON Lines); bits 2-3 how
/// the rest arrives (plain; as a gzip stream, mutated as such; gzipped here, so valid
/// streams reach the parsers); bits 4-7 the chunk size the splitter is fed (1 byte to 64
/// KiB), since records cross chunk boundaries. The URL and pin columns are the defaults
/// (`url`, `sha256`); the seeds use them.
@_cdecl("LLVMFuzzerTestOneInput")
public func tableInputFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    let format = [InputFormat.lines, .csv, .tsv, .jsonl][Int(input.mode & 3)]
    let transport = (input.mode >> 2) & 3
    let chunk = 1 << Int(input.mode >> 4)
    let file = transport == 2 ? gzip(input.rest) : Array(input.rest)
    let isGzipped = transport != 0
    let fd = FuzzInput.unnamedFile(file)
    defer { close(fd) }

    var source = SourceBytes(DescriptorReader(fd: fd, from: 0), isGzipped: isGzipped)
    defer { source.end() }
    var splitter = InputSplitter(source: "fuzz", format: format, options: InputOptions())
    var items: [InputItem] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(chunk, 1 << 16), alignment: 16)
    defer { buffer.deallocate() }
    // At most 64 MiB read (a gzip bomb of the input limit inflates far less).
    for _ in 0..<(1 << 26) / buffer.count {
        guard let count = try? source.read(into: buffer), count > 0 else { break }
        splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]), into: &items)
        items.removeAll(keepingCapacity: true)
        if splitter.hasFailed { break }
    }
    splitter.finish(into: &items)
    _ = RowCounter.rows(ofFile: "/proc/self/fd/\(fd)", format: format, isGzipped: isGzipped)
    return 0
}

/// `bytes` as a gzip stream (zlib's deflate with the gzip wrapper).
private func gzip(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var stream = z_stream()
    guard
        deflateInit2_(
            &stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
            == Z_OK
    else { return [] }
    defer { deflateEnd(&stream) }
    var input = Array(bytes)
    var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
    let produced = input.withUnsafeMutableBufferPointer { source in
        out.withUnsafeMutableBufferPointer { target in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            stream.next_out = target.baseAddress
            stream.avail_out = UInt32(target.count)
            return deflate(&stream, Z_FINISH) == Z_STREAM_END ? target.count - Int(stream.avail_out) : 0
        }
    }
    return Array(out.prefix(produced))
}
