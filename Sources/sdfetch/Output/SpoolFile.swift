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

    init() {
        file = tmpfile()
    }

    deinit {
        if let file { fclose(file) }
    }

    func add(_ record: String) {
        guard let file, !hasFailed, fputs(record, file) >= 0 else {
            hasFailed = file != nil
            inMemory.append(record)
            return
        }
    }

    /// Calls `body` with every record (its newline kept) and its place, in order.
    func readAll(_ body: (Substring, Place) async -> Void) async {
        if let file {
            fflush(file)
            rewind(file)
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
        if let file {
            rewind(file)
            ftruncate(fileno(file), 0)
        }
    }
}
