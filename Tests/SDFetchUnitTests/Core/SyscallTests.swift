import Foundation
import Synchronization
import Testing

@testable import SDFetchCore

@Suite("System calls")
struct SyscallTests {
    @Test("a failing call throws its name and errno, read at once")
    func typedError() {
        #expect(throws: SystemCallError(call: "read", errno: EBADF)) {
            var byte: UInt8 = 0
            _ = try syscall(where: "read") { read(-1, &byte, 1) }
        }
        #expect(SystemCallError(call: "read", errno: EBADF).description == "bad file descriptor")
    }

    @Test("the write-all loop reports a full disk (/dev/full) instead of looping")
    func fullDisk() throws {
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(FileIO.writeAll([UInt8](repeating: 7, count: 1 << 16), to: fd) == false)
        #expect(errno == ENOSPC)
    }

    @Test("the write-all loop writes every byte of a buffer larger than a pipe holds")
    func shortWrites() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let succeeded = Flag()
        // A writer thread, so the pipe fills and the write comes back short many times.
        Thread {
            succeeded.set(FileIO.writeAll(bytes, to: writeEnd))
            close(writeEnd)
        }.start()
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while let count = try? chunk.withUnsafeMutableBytes({ buffer throws(SystemCallError) in
            try syscall(where: "read") { read(readEnd, buffer.baseAddress, buffer.count) }
        }), count > 0 {
            received += chunk[..<count]
        }
        close(readEnd)
        #expect(received == bytes)
        let didSucceed = succeeded.isSet
        #expect(didSucceed)
    }
}

/// Shared with the writer thread, hence a class.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set(_ flag: Bool) { value.store(flag, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
