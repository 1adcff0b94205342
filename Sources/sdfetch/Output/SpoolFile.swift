import Glibc

/// Records of one line each (ending in a newline) held for later, in an unlinked temporary
/// file (`tmpfile(3)`), or in memory when none can be made or writing to it fails (a full
/// `/tmp`): those follow the spooled ones, so the order holds. Used by one owner; not shared.
final class SpoolFile {
    /// Where a record is: its offset in the file, or its index in memory.
    enum Place {
        case file(Int)
        case memory(Int)
    }

    private let file: UnsafeMutablePointer<FILE>?
    private var inMemory: [String] = []
    private var hasFailed = false
    /// Bytes written to the file: the offset of the next record.
    private var end = 0
    /// A read moved the file's position away from its end.
    private var isPositionMoved = false

    init() {
        file = tmpfile()
    }

    deinit {
        if let file { fclose(file) }
    }

    /// Adds `record` and returns its place (for ``record(at:)``).
    @discardableResult
    func add(_ record: String) -> Place {
        if isPositionMoved, let file {
            isPositionMoved = false
            hasFailed = hasFailed || fseek(file, end, SEEK_SET) != 0
        }
        guard let file, !hasFailed, fputs(record, file) >= 0 else {
            hasFailed = file != nil
            inMemory.append(record)
            return .memory(inMemory.count - 1)
        }
        defer { end += record.utf8.count }
        return .file(end)
    }

    /// Calls `body` with every record (its newline kept) and its place, in order.
    func readAll(_ body: (Substring, Place) async -> Void) async {
        if let file {
            fflush(file)
            rewind(file)
            isPositionMoved = true
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(buffer) }
            var offset = 0
            while case let length = getline(&buffer, &capacity, file), length > 0, let buffer {
                await body(Substring(String(cString: buffer)), .file(offset))
                offset += length
            }
        }
        for (index, record) in inMemory.enumerated() { await body(Substring(record), .memory(index)) }
    }

    /// The record at `place` (read again from the file), or nil when it cannot be read.
    func record(at place: Place) -> String? {
        switch place {
        case .memory(let index):
            return inMemory[index]
        case .file(let offset):
            isPositionMoved = true
            guard let file, fseek(file, offset, SEEK_SET) == 0 else { return nil }
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(buffer) }
            guard getline(&buffer, &capacity, file) > 0, let buffer else { return nil }
            return String(cString: buffer)
        }
    }

    /// Empties the spool for reuse.
    func clear() {
        inMemory.removeAll()
        end = 0
        isPositionMoved = false
        if let file {
            rewind(file)
            ftruncate(fileno(file), 0)
        }
    }
}
