import Foundation

/// Pipe reads and writes that survive signals. Foundation's `readDataToEndOfFile()` and
/// `availableData` trap on `EINTR`, and `write(contentsOf:)` throws it, which any signal
/// delivered to the test process (a child's `SIGCHLD`, an in-process command's signal
/// sources) can cause in whichever thread is blocked on a child's pipe.
public enum PipeIO {
    /// The next bytes the pipe holds, waiting for some; empty at its end or on an error.
    public static func chunk(_ handle: FileHandle, maximum: Int = 65_536) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, maximum) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything up to the pipe's end.
    public static func all(_ handle: FileHandle) -> Data {
        var data = Data()
        while case let chunk = chunk(handle), !chunk.isEmpty { data.append(chunk) }
        return data
    }

    /// Writes all of `bytes`; false when the reader is gone (`EPIPE`) or another error.
    @discardableResult
    public static func write(_ bytes: some Collection<UInt8>, to handle: FileHandle) -> Bool {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(handle.fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if count > 0 {
                offset += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
