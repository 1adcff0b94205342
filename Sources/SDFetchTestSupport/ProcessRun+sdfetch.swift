extension ProcessRun {
    /// Runs the built `sdfetch` as a user would, without a config file: a command word stays
    /// first (`--no-config` goes after it), and a fetch also gets no progress bar.
    public static func sdfetch(
        _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws -> ProcessRun {
        let commands: Set = ["clean", "stats", "verify", "merge", "failed"]
        let full =
            commands.contains(arguments.first ?? "")
            ? [arguments[0], "--no-config"] + arguments.dropFirst()
            : ["--no-config", "--progress", "never"] + arguments
        return try await launch(BuiltProduct.path("sdfetch"), full, input: input, environment: environment)
    }
}
