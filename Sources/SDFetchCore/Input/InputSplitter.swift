/// The splitter of one source by its format: lines (``LineSplitter``) or rows
/// (``RowSplitter``).
enum InputSplitter {
    case lines(LineSplitter)
    case rows(RowSplitter)

    init(source: String, format: InputFormat, options: InputOptions) {
        self =
            format.isTabular
            ? .rows(RowSplitter(source: source, format: format, options: options))
            : .lines(LineSplitter(source: source))
    }

    /// Feeds a chunk; complete lines or rows are appended to `out`.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, into out: inout [InputItem]) {
        switch self {
        case .lines(var splitter):
            splitter.feed(chunk, into: &out)
            self = .lines(splitter)
        case .rows(var splitter):
            splitter.feed(chunk, into: &out)
            self = .rows(splitter)
        }
    }

    /// Flushes a last line or row without a final newline.
    mutating func finish(into out: inout [InputItem]) {
        switch self {
        case .lines(var splitter):
            splitter.finish(into: &out)
            self = .lines(splitter)
        case .rows(var splitter):
            splitter.finish(into: &out)
            self = .rows(splitter)
        }
    }

    /// The source cannot be read further as what it was said to be (a table's header).
    var hasFailed: Bool {
        if case .rows(let splitter) = self { splitter.failure != nil } else { false }
    }
}
