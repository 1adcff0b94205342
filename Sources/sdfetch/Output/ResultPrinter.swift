import Foundation
import SDFetchCore

/// Writes result lines to standard output: `STATUS<TAB>PATH<TAB>URL`.
enum ResultPrinter {
    static func printLine(_ result: FetchResult) {
        let line = "\(result.status.rawValue)\t\(result.path ?? "-")\t\(result.url)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
        if let failure = result.failure {
            StandardError.write("sdfetch: \(result.status == .invalid ? "invalid" : "failed"): \(result.url): \(failure.kind.label): \(failure.detail)\n")
        }
    }
}
