/// The bytes of one input source as the splitters see them: read from its descriptor as
/// they are, or inflated on the way (``GzipInflater``, a file named `*.gz`).
struct SourceBytes {
    private var file: DescriptorReader
    private var inflater: GzipInflater?

    init(_ file: DescriptorReader, isGzipped: Bool) {
        self.file = file
        inflater = isGzipped ? GzipInflater(file) : nil
    }

    /// Fills `buffer`; 0 at the end of the source.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputReadError) -> Int {
        if inflater != nil { return try inflater!.read(into: buffer) }
        return try file.read(into: buffer)
    }

    /// Frees what the inflater holds; the descriptor stays the caller's.
    func end() {
        inflater?.end()
    }
}
