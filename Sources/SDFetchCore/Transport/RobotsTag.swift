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
    ///
    /// A value may combine directives and scopes (`noindex, sdfetch: noai`, or several
    /// header lines a proxy joined with commas): a scope applies to the directives after
    /// it up to the next scope, as Google reads `otherbot: noindex, nofollow`, and bare
    /// directives before any scope apply to every agent. A directive scoped to another
    /// agent says nothing to sdfetch. A valued directive (`max-snippet: 20`,
    /// `unavailable_after: Wed, 03 Nov 2027 ...`) is no scope, nor is text with a blank
    /// before its colon (a date's time).
    static func optsOut(_ value: String) -> Bool {
        var applies = true
        for item in value.split(separator: ",") {
            var directive = item.trimmingBlanks()
            if let colon = directive.firstIndex(of: ":") {
                let name = directive[..<colon].trimmingBlanks().lowercased()
                if !name.isEmpty, !name.contains(" " as Character), !name.contains("\t" as Character),
                    !valuedDirectives.contains(name)
                {
                    applies = name == productToken || name == "*"
                    directive = directive[directive.index(after: colon)...].trimmingBlanks()
                }
            }
            let word = directive.lowercased()
            if applies, word == "noai" || word == "noimageai" { return true }
        }
        return false
    }
}
