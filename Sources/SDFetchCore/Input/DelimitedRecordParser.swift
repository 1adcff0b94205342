/// Splits a byte stream into records, streaming: CSV (RFC 4180 quoting), TSV (fields
/// between tabs, no quoting), or whole lines (JSON Lines).
///
/// Written here rather than taken from a package: the Swift CSV readers in the package
/// mirror either load the whole text first (SwiftCSV) or read through Foundation's
/// `InputStream` one `UnicodeScalar` at a time (CSV.swift), which the static binary cannot
/// link (FoundationEssentials only) and which knows no line numbers for `FILE:LINE`.
///
/// Quoting follows RFC 4180 with the leniency of Python's `csv` module: a quote inside an
/// unquoted field is kept as a character, and text after a closing quote joins the field.
/// A record ends at LF outside quotes; a CR before it is dropped, a CRLF inside quotes kept.
/// A UTF-8 BOM at the start is skipped; a blank line is no record. Memory and time are
/// linear in the input whatever it holds: a record's kept bytes and delimiters count
/// together toward ``maxRecordBytes`` and its fields toward ``maxFields``; past either the
/// record's further bytes and field ends are dropped, not collected, and the record flagged
/// (an unclosed quote then swallows at most the rest of its file, reported as one bad
/// record). <doc:Security> lists what this bounds.
struct DelimitedRecordParser {
    /// How fields are separated within a record.
    enum Layout {
        case csv
        case tsv
        /// The whole line is one field (JSON Lines).
        case line
    }

    /// The most bytes one record may hold: captions and catalogue rows are far smaller,
    /// and every row read ahead of the fetches is held in memory.
    static let maxRecordBytes = 64 << 10

    /// The most fields one record may have (a header row: columns). Without it a row of
    /// commas, a few KB gzipped, held a field end per comma: catalogues have tens of
    /// columns, and a row of embeddings spread over columns some hundreds.
    static let maxFields = 4096

    /// One record, valid only during the call that receives it.
    struct Record {
        /// The line the record starts on (1-based).
        let line: Int
        /// Longer than ``maxRecordBytes``: its fields are cut.
        let isOverlong: Bool
        /// More than ``maxFields`` fields: the first ones only are kept.
        let hasTooManyFields: Bool
        /// The input ended inside a quoted field.
        let isUnterminated: Bool
        fileprivate let bytes: [UInt8]
        fileprivate let ends: [Int]

        var fieldCount: Int { ends.count }

        /// The bytes of field `index`; for the field a flagged record was cut in (its end
        /// never recorded), what was kept of it; empty past that.
        func field(_ index: Int) -> ArraySlice<UInt8> {
            let end = index < ends.count ? ends[index] : bytes.count
            let start = index == 0 ? 0 : min(index - 1 < ends.count ? ends[index - 1] : bytes.count, end)
            return bytes[start..<end]
        }
    }

    private enum State {
        case fieldStart
        case unquoted
        case quoted
        /// A quote inside a quoted field: the field's end, or the first of a doubled quote.
        case quoteInQuoted
    }

    private let delimiter: UInt8?
    private let isQuoting: Bool
    /// Counting only (``RowCounter``): records are found but their bytes not kept.
    private let keepsBytes: Bool
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    private var state = State.fieldStart
    private var line = 1
    private var recordLine = 1
    private var isOverlong = false
    private var hasTooManyFields = false
    /// Fields ended so far in this record (``ends`` stops growing once it is flagged).
    private var fieldCount = 0
    /// The record has a quoted field or a delimiter, so it is not a blank line.
    private var isMarked = false
    /// The record has a byte other than blanks (space, tab, CR) outside its marks.
    private var hasVisible = false
    private var lastAppended: UInt8 = 0
    private var atStart = true

    init(_ layout: Layout, keepsBytes: Bool = true) {
        switch layout {
        case .csv: (delimiter, isQuoting) = (UInt8(ascii: ","), true)
        case .tsv: (delimiter, isQuoting) = (UInt8(ascii: "\t"), false)
        case .line: (delimiter, isQuoting) = (nil, false)
        }
        self.keepsBytes = keepsBytes
    }

    /// Feeds a chunk; every record it completes goes to `emit`.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (Record) -> Void) {
        var index = 0
        if atStart, !chunk.isEmpty {
            atStart = false
            if chunk.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }
        let quote = UInt8(ascii: "\"")
        let delimiter = self.delimiter ?? 0x0A
        while index < chunk.count {
            let byte = chunk[index]
            switch state {
            case .fieldStart, .unquoted:
                if byte == 0x0A {
                    index += 1
                    dropCarriageReturn()
                    endRecord(emit)
                } else if byte == delimiter {
                    index += 1
                    isMarked = true
                    endField()
                } else if byte == quote && isQuoting && state == .fieldStart {
                    index += 1
                    isMarked = true
                    state = .quoted
                } else {
                    // The rest of the field up to a delimiter or LF, in one append.
                    var end = index + 1
                    while end < chunk.count, chunk[end] != 0x0A, chunk[end] != delimiter { end += 1 }
                    append(chunk[index..<end])
                    index = end
                    state = .unquoted
                }
            case .quoted:
                index += 1
                if byte == quote {
                    state = .quoteInQuoted
                } else if byte == 0x0A {
                    line += 1
                    append(chunk[(index - 1)..<index])
                } else {
                    var end = index
                    while end < chunk.count, chunk[end] != quote, chunk[end] != 0x0A { end += 1 }
                    append(chunk[(index - 1)..<end])
                    index = end
                }
            case .quoteInQuoted:
                index += 1
                if byte == quote {
                    append(chunk[(index - 1)..<index])
                    state = .quoted
                } else if byte == delimiter {
                    endField()
                } else if byte == 0x0A {
                    endRecord(emit)
                } else if byte != 0x0D {
                    append(chunk[(index - 1)..<index])
                    state = .unquoted
                }
            }
        }
    }

    /// Ends the last record when the stream does not end with a newline.
    mutating func finish(_ emit: (Record) -> Void) {
        dropCarriageReturn()
        endRecord(emit, counting: false)
    }

    private mutating func append(_ run: Slice<UnsafeRawBufferPointer>) {
        lastAppended = run.last ?? lastAppended
        if !hasVisible { hasVisible = run.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D } }
        guard keepsBytes, !isFlagged else { return }
        // Every delimiter counts as a byte: a row of bare commas is as long as it looks.
        let room = Self.maxRecordBytes - bytes.count - ends.count
        if run.count > room {
            bytes.append(contentsOf: run.prefix(room))
            isOverlong = true
        } else {
            bytes.append(contentsOf: run)
        }
    }

    /// A CR right before the LF that ends an unquoted field belongs to the line end.
    private mutating func dropCarriageReturn() {
        guard state == .unquoted, lastAppended == 0x0D else { return }
        lastAppended = 0
        if keepsBytes, !isFlagged, bytes.count > (ends.last ?? 0) { bytes.removeLast() }
    }

    /// Past a limit nothing more of the record is collected.
    private var isFlagged: Bool { isOverlong || hasTooManyFields }

    private mutating func endField() {
        fieldCount += 1
        state = .fieldStart
        guard keepsBytes, !isFlagged else { return }
        if fieldCount > Self.maxFields {
            hasTooManyFields = true
        } else if bytes.count + ends.count >= Self.maxRecordBytes {
            isOverlong = true
        } else {
            ends.append(bytes.count)
        }
    }

    /// Ends the record at a LF (`counting`: the LF moves to the next line).
    private mutating func endRecord(_ emit: (Record) -> Void, counting newline: Bool = true) {
        let isBlank = fieldCount == 0 && !isMarked && !hasVisible
        let isUnterminated = state == .quoted
        endField()
        if !isBlank {
            emit(
                Record(
                    line: recordLine, isOverlong: isOverlong, hasTooManyFields: hasTooManyFields,
                    isUnterminated: isUnterminated, bytes: bytes, ends: ends))
        }
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        fieldCount = 0
        isOverlong = false
        hasTooManyFields = false
        isMarked = false
        hasVisible = false
        lastAppended = 0
        if newline { line += 1 }
        recordLine = line
    }
}
