import Foundation
import SDFetchCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A pseudo-terminal pair, so a test can give a child process a real TTY on one stream.
///
/// The slave end is what the child sees (`isatty` is true, `TIOCGWINSZ` answers); the
/// test reads the master end. ``capture(until:)`` drains the master on the calling
/// thread with `poll`, bounded by a deadline, so a test never hangs on a silent child.
/// The slave is put in raw mode, so the master reads exactly the bytes the child wrote
/// (no `\n` -> `\r\n` translation to confuse a count of redraws).
public final class PseudoTerminal: Sendable {
    public let master: Int32
    /// -1 once closed; atomic so ``closeSlave()`` is safe from any thread.
    private let slaveDescriptor: Atomic<Int32>

    /// The slave end's descriptor, or -1 once ``closeSlave()`` ran.
    public var slave: Int32 { slaveDescriptor.load(ordering: .acquiring) }

    /// Opens a pair with a window of `columns` x `rows`.
    public init(columns: UInt16 = 80, rows: UInt16 = 24) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&master, &slave, nil, nil, &size) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        var attributes = termios()
        tcgetattr(slave, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(slave, TCSANOW, &attributes)
        self.master = master
        self.slaveDescriptor = Atomic(slave)
    }

    /// A handle on the slave end for `Process.standardError` (or output); the pair keeps ownership.
    public var slaveHandle: FileHandle { FileHandle(fileDescriptor: slave, closeOnDealloc: false) }

    /// Closes the test's copy of the slave, so reads see end-of-file once the child exits.
    public func closeSlave() {
        let old = slaveDescriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { close(old) }
    }

    /// ``capture(until:)`` on a thread of its own, so a test does not park a cooperative thread.
    public func captureInBackground(until deadline: ContinuousClock.Instant) async -> [UInt8] {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.capture(until: deadline)) }.start()
        }
    }

    /// Reads the master until the child side is closed (EIO on Linux) or `deadline` passes.
    public func capture(until deadline: ContinuousClock.Instant) -> [UInt8] {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard let ready = try? syscall(where: "poll", { poll(&descriptor, 1, 50) }), ready > 0 else { continue }
            let read = try? buffer.withUnsafeMutableBytes { bytes throws(SystemCallError) in
                try syscall(where: "read") { Glibc.read(master, bytes.baseAddress, bytes.count) }
            }
            // EIO or an end: every slave descriptor is closed.
            guard let count = read, count > 0 else { break }
            collected += buffer[0..<count]
        }
        return collected
    }

    deinit {
        close(master)
        closeSlave()
    }
}
