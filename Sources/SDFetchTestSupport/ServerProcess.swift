import Foundation

/// Starts a test's server process (nginx, redis-server) with its output discarded and waits
/// up to 10 s until 127.0.0.1:`port` accepts connections; a server that exits or does not
/// listen by then is killed, and the error carries `log` (its log file, read then).
func startServerProcess(
    _ binary: String, _ arguments: [String], port: Int, name: String, log: () -> String
) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = ContinuousClock.now + .seconds(10)
    while !LocalNginx.accepts(port: port) {
        guard process.isRunning, ContinuousClock.now < deadline else {
            kill(process.processIdentifier, SIGKILL)
            throw TLSServerError("\(name) did not start: \(log())")
        }
        usleep(10_000)
    }
    return process
}
