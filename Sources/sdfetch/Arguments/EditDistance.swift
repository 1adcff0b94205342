/// "Did you mean" suggestions from the Damerau-Levenshtein distance between two words.
enum EditDistance {
    /// Insertions, deletions, substitutions and swaps of two neighbours needed to turn `a`
    /// into `b` (by characters; the "optimal string alignment" variant). Counting a swap as
    /// one edit is what makes `clena` one step from `clean` and `stast` close to `stats`.
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows: the swap looks two rows back.
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }

    /// The candidate closest to `word`, when it is close enough to be a plausible typo.
    ///
    /// "Close enough" is at most a third of the word's length (at least 1, at most 3), or
    /// `word` being a prefix of exactly one candidate (`--conc` for `--concurrency`).
    static func closest(to word: String, among candidates: [String]) -> String? {
        let prefixed = candidates.filter { $0.hasPrefix(word) && word.count >= 3 }
        if prefixed.count == 1 { return prefixed[0] }
        let limit = min(3, max(1, word.count / 3))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = between(word, candidate)
            if distance <= limit, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// `" (did you mean 'X'?)"` or the empty string.
    static func suggestion(for word: String, among candidates: [String]) -> String {
        guard let match = closest(to: word, among: candidates), match != word else { return "" }
        return " (did you mean '\(match)'?)"
    }
}
