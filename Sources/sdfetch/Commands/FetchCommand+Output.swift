import Glibc
import SDFetchCore

/// What `-o` names, decided once the inputs are known (sdfetch(1) `-o`): a folder, one
/// file (one URL argument, as curl's `-o FILE`), or standard output (`-o -`, one URL).
extension FetchCommand {
    mutating func resolveOutput() throws(UsageError) {
        guard let output = outputDirectory else { return }
        let isOneURL = URLArgument.isSingleURL(sources)
        if output == "-" {
            guard isOneURL else {
                throw UsageError(
                    "-o - writes one image to standard output: give one URL argument (a list goes to -o DIR)")
            }
            if isLinking { throw UsageError("--link needs a file to link: -o - writes to standard output") }
            isStreaming = true
            outputDirectory = nil
        } else if URLArgument.namesOutputFile(output, sources: sources) {
            outputFile = output
            outputDirectory = nil
        } else if !isOneURL, !output.hasSuffix("/"), !Self.isDirectory(output),
            let format = OutputFileFormat.of(output)
        {
            // curl would write the first image there; a folder named `two.png` is what nobody means.
            let name = Escaping.terminal(output)
            throw UsageError(
                "-o \(name) names one \(format.rawValue.uppercased()) file, but the input can hold several URLs: "
                    + "give a folder (-o \(name)/ if that is the name you want), or one URL argument")
        }
    }

    /// What `--resize` without `-o` leaves undone, said once before the run: the cache
    /// keeps originals, so nothing would be resized. Nil when there is nothing to say.
    var resizeWithoutOutputWarning: String? {
        guard resize.size > 0, outputDirectory == nil, outputFile == nil, !isStreaming else { return nil }
        return "sdfetch: warning: --resize makes the -o copies; without -o nothing is resized "
            + "(the cache keeps the originals)\n"
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
