/// The `-o` directory or a file in it could not be written.
struct OutputError: Error {
    let detail: String
}
