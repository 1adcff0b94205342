import Foundation
import Synchronization
import SDFetchCore

/// Standard output and standard error of a fetch run, shared by the event consumer and the ticker.
///
/// Standard output is buffered: one `write` per 64 KiB when it is a file or pipe (a warm run
/// prints 50,000 lines a second), per line when it is a terminal, and whatever is pending
/// at least every ``flushInterval`` via ``flushIfStale()``. Standard error carries the
/// redrawn progress line: any other text first erases it and then draws it again, so
/// messages and results never land in the middle of the bar. State sits in one `Mutex`,
/// which also orders the writes of both streams.
final class Console: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var lastFlush = ContinuousClock.now
        /// The bar text on screen now, or nil.
        var bar: String?
    }

    private let state = Mutex(State())
    private let isOutputTerminal: Bool
    /// Whether erasing uses `ESC [ K`; without it (`TERM=dumb`) the line is blanked with spaces.
    private let canEraseLine: Bool
    /// Output written to the same terminal as the bar must erase the bar first.
    private let outputSharesBarTerminal: Bool

    static let flushInterval = Duration.milliseconds(250)
    private static let bufferLimit = 64 * 1024

    init(environment: ProcessEnvironment) {
        isOutputTerminal = environment.isStandardOutputTerminal
        canEraseLine = !environment.isDumbTerminal
        outputSharesBarTerminal = environment.isStandardOutputTerminal && environment.isStandardErrorTerminal
    }

    /// Queues a result line for standard output.
    func output(_ text: String) {
        state.withLock { state in
            state.pending.append(contentsOf: text.utf8)
            if isOutputTerminal || state.pending.count >= Self.bufferLimit {
                let bar = outputSharesBarTerminal ? state.bar : nil
                if bar != nil { erase(&state) }
                flush(&state)
                if let bar { draw(bar, &state) }
            }
        }
    }

    /// Writes a message line to standard error, keeping any bar below it.
    func error(_ text: String) {
        state.withLock { state in
            let bar = state.bar
            if bar != nil { erase(&state) }
            FileDescriptorWriter.write(text, to: STDERR_FILENO)
            if let bar { draw(bar, &state) }
        }
    }

    /// Writes a message from the signal path: never waits for the lock, never blocks the caller.
    ///
    /// A writer blocked in `write(1)` on a full pipe (`sdfetch urls | less`) holds the lock;
    /// waiting for it would leave Ctrl-C unanswered. When the lock is free the message is
    /// written at once, in order with the bar (so it is out before a quick exit); when it is
    /// held, a thread of its own writes it straight to standard error.
    func notice(_ text: String) {
        let written: Void? = state.withLockIfAvailable { state in
            let bar = state.bar
            if bar != nil { erase(&state) }
            FileDescriptorWriter.write(text, to: STDERR_FILENO)
            if let bar { draw(bar, &state) }
        }
        guard written == nil else { return }
        Thread { FileDescriptorWriter.write(text, to: STDERR_FILENO) }.start()
    }

    /// Replaces the bar with `line` (already fitted to the terminal width).
    func showBar(_ line: String) {
        state.withLock { state in draw(line, &state) }
    }

    /// Erases the bar for good (before the summary).
    func removeBar() {
        state.withLock { state in erase(&state) }
    }

    /// Writes pending output when the last write is older than ``flushInterval``.
    func flushIfStale() {
        state.withLock { state in
            if !state.pending.isEmpty, ContinuousClock.now - state.lastFlush >= Self.flushInterval { flush(&state) }
        }
    }

    /// Writes all pending output (end of run).
    func flush() {
        state.withLock { state in flush(&state) }
    }

    // MARK: - Under the lock

    private func flush(_ state: inout State) {
        state.lastFlush = .now
        guard !state.pending.isEmpty else { return }
        state.pending.withUnsafeBytes { FileDescriptorWriter.write($0, to: STDOUT_FILENO) }
        state.pending.removeAll(keepingCapacity: true)
    }

    private func draw(_ line: String, _ state: inout State) {
        if canEraseLine {
            FileDescriptorWriter.write("\r" + line + "\u{1B}[K", to: STDERR_FILENO)
        } else {
            let blank =
                (state.bar?.count ?? 0) > line.count ? String(repeating: " ", count: state.bar!.count - line.count) : ""
            FileDescriptorWriter.write("\r" + line + blank, to: STDERR_FILENO)
        }
        state.bar = line
    }

    private func erase(_ state: inout State) {
        guard let bar = state.bar else { return }
        let text = canEraseLine ? "\r\u{1B}[K" : "\r" + String(repeating: " ", count: bar.count) + "\r"
        FileDescriptorWriter.write(text, to: STDERR_FILENO)
        state.bar = nil
    }
}

// MARK: - Raw writes

/// Writes whole byte buffers to a file descriptor through the one write-all loop
/// (``FileIO/writeAll(_:to:)``).
///
/// A failure ends the write silently: a closed pipe (`sdfetch | head`) must not stop the
/// run; SIGPIPE is ignored by `@main` for the same reason.
enum FileDescriptorWriter {
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        _ = FileIO.writeAll(bytes, to: fd)
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }
}

/// Unbuffered standard error, for messages outside a fetch run (usage errors, `clean`, `path`).
enum StandardError {
    static func write(_ text: String) {
        FileDescriptorWriter.write(text, to: STDERR_FILENO)
    }
}
