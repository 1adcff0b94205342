import Foundation

/// Writes a file so that readers see either nothing or the whole content.
///
/// The bytes go to a uniquely named file in `temporaryDirectory` (same file system as the
/// target), are flushed, then renamed over the target. A crash leaves only a stray
/// temporary file, which `clean` removes.
enum AtomicWrite {
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String, temporaryDirectory: String) throws(FetchFailure) {
        let temporary = "\(temporaryDirectory)/\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FetchFailure(.io, "cannot create \(temporary): \(errnoText())") }
        var written = 0
        while written < bytes.count {
            let result = Foundation.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                let reason = errnoText()
                close(fd)
                unlink(temporary)
                throw FetchFailure(.io, "cannot write \(path): \(reason)")
            }
            written += result
        }
        guard close(fd) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw FetchFailure(.io, "cannot write \(path): \(reason)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw FetchFailure(.io, "cannot rename into \(path): \(reason)")
        }
    }

    static func write(_ bytes: [UInt8], to path: String, temporaryDirectory: String) throws(FetchFailure) {
        let result: Result<Void, FetchFailure> = bytes.withUnsafeBytes { buffer in
            do throws(FetchFailure) {
                try write(buffer, to: path, temporaryDirectory: temporaryDirectory)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}

/// `strerror(errno)` in lower case, for failure details.
func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code)).lowercased()
}
