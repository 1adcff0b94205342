/// A publisher's `X-Robots-Tag` opt-out from AI use, read from one header value.
enum RobotsTag {
    /// The product token a publisher names to address sdfetch (`X-Robots-Tag: sdfetch: noai`).
    static let productToken = "sdfetch"

    /// Directives that take a value after a colon, so `max-snippet: 20` is not read as a scope.
    private static let valuedDirectives: Set<String> = [
        "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview",
    ]

    /// Whether one `X-Robots-Tag` value forbids AI use (`noai` or `noimageai`) to sdfetch:
    /// bare, or scoped to a user agent named `sdfetch` or `*` (`X-Robots-Tag: sdfetch: noai`).
    /// A value scoped to another agent says nothing to sdfetch.
    static func optsOut(_ value: String) -> Bool {
        var rest = Substring(value)
        if let colon = rest.firstIndex(of: ":") {
            let scope = rest[..<colon].trimmingBlanks().lowercased()
            if !scope.isEmpty, !scope.contains(" " as Character), !scope.contains("," as Character),
                !valuedDirectives.contains(scope)
            {
                guard scope == productToken || scope == "*" else { return false }
                rest = rest[rest.index(after: colon)...]
            }
        }
        return rest.split(separator: ",").contains { directive in
            let word = directive.trimmingBlanks().lowercased()
            return word == "noai" || word == "noimageai"
        }
    }
}
