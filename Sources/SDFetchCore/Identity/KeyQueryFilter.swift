import Glibc

/// `--key-ignore-query PATTERN`: query parameters whose name matches a glob are left out of
/// a key's identity (its text, digest, cache entry and de-duplication) and still sent
/// (<doc:Fetching#Signed-URLs>). Presigned S3 and GCS URLs and CloudFront signed URLs carry a
/// new signature on every run; without their signature parameters they name one image.
///
/// A step after parsing, applied to the parsed key's query: ``URLKey/init(parsing:)`` stays the
/// one place that normalises a URL. Names are matched as written (not percent-decoded),
/// ignoring case (S3 accepts `x-amz-signature` as well), with `fnmatch`'s `*`, `?` and `[...]`.
public struct KeyQueryFilter: Sendable, Equatable {
    /// The globs, in the order given; empty: every key is left as parsed.
    public let patterns: [String]

    /// The globs lower-cased: glibc's `FNM_CASEFOLD` needs `_GNU_SOURCE`, which Swift's
    /// Glibc module does not define, so both sides are lowered instead.
    private let lowered: [String]

    public init(patterns: [String] = []) {
        self.patterns = patterns
        lowered = patterns.map { $0.lowercased() }
    }

    /// `key` without the matching parameters in its identity; ``URLKey/request`` keeps them.
    /// The key itself when nothing matches (the common case costs one scan for `?`).
    public func apply(to key: URLKey) -> URLKey {
        guard !patterns.isEmpty, let kept = keptText(of: key.string) else { return key }
        var filtered = key
        filtered.sentString = key.request
        filtered.string = kept
        filtered.digest = KeyDigest(of: URLKey.authorityMasked(kept, hasPassword: true))
        return filtered
    }

    /// Whether a parameter named `name` is left out of keys.
    public func ignores(_ name: some StringProtocol) -> Bool {
        let name = name.lowercased()
        return lowered.contains { fnmatch($0, name, 0) == 0 }
    }

    /// The patterns that match a parameter of `url`'s query, in the order given: `-v` names
    /// a pattern no URL of a run matched (a typo, or a comment taken into the glob).
    public func patterns(matchingQueryOf url: String) -> [String] {
        guard !patterns.isEmpty, let mark = url.firstIndex(of: "?") else { return [] }
        let names = url[url.index(after: mark)...].split(separator: "&").map { $0.prefix { $0 != "=" }.lowercased() }
        return zip(patterns, lowered).filter { _, glob in names.contains { fnmatch(glob, $0, 0) == 0 } }.map(\.0)
    }

    /// `url` without the matching parameters (and without `?` when none is left); nil when
    /// no parameter matches. Empty parameters (`a=1&&b=2`) are kept as written.
    private func keptText(of url: String) -> String? {
        guard let mark = url.firstIndex(of: "?") else { return nil }
        let query = url[url.index(after: mark)...]
        let parameters = query.split(separator: "&", omittingEmptySubsequences: false)
        let kept = parameters.filter { parameter in
            let name = parameter.prefix { $0 != "=" }
            return name.isEmpty || !ignores(name)
        }
        guard kept.count < parameters.count else { return nil }
        let base = url[..<mark]
        return kept.isEmpty ? String(base) : base + "?" + kept.joined(separator: "&")
    }
}
