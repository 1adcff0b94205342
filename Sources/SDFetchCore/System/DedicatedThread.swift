internal import CSDFetchShims
import Glibc

/// Starts a plain POSIX thread for work that waits on the world (curl's loop, the input
/// reader, `flock`, the file threads), detached: it ends when its body returns.
///
/// Instead of Foundation's `Thread`: any use of the full Foundation links it whole into the
/// static binary (CoreFoundation and ICU's data, about 44 MB of 64), where FoundationEssentials
/// and this file need none of it. Same defaults as `Thread`: the process's default stack size.
package enum DedicatedThread {
    /// Runs `body` on a new thread named `name` (as `top -H` and debuggers show it; Linux
    /// keeps the first 15 bytes). A thread that cannot be created is a resource failure the
    /// process cannot work without: it traps, as `Thread.start()` does.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                let name = String(decoding: start.name.utf8.prefix(15), as: UTF8.self)
                _ = name.withCString { CSDFetch_pthread_setname_np(pthread_self(), $0) }
                start.body()
                return nil
            }, context)
        guard status == 0 else {
            preconditionFailure("pthread_create failed for \(name): \(String(cString: strerror(status)))")
        }
        pthread_detach(thread)
    }

    /// What the new thread needs, handed over with one retain the thread releases.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
