import FoundationEssentials

extension DiskCache {
    /// The cache directory the `sdfetch` command uses when given none, so a program sharing
    /// its cache opens the same one: `$SDFETCH_CACHE_DIR`, else `$XDG_CACHE_HOME/sdfetch`
    /// (an absolute `XDG_CACHE_HOME` only, as the XDG spec says), else `~/.cache/sdfetch`.
    ///
    /// - Parameter environment: the variables to read; the process's by default.
    public static func defaultDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let explicit = environment["SDFETCH_CACHE_DIR"], !explicit.isEmpty { return explicit }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/sdfetch" }
        let home =
            environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/.cache/sdfetch"
    }
}
