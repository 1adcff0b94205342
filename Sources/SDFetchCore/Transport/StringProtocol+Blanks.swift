extension StringProtocol {
    /// Without the spaces and tabs around it.
    func trimmingBlanks() -> SubSequence {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isBlank($0) }), let end = lastIndex(where: { !isBlank($0) }) else {
            return self[endIndex...]
        }
        return self[start...end]
    }
}
