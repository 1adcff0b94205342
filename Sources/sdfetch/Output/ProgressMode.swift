/// `--progress`: whether standard error shows a redrawn bar.
enum ProgressMode: String, Sendable, CaseIterable {
    case auto, always, never
}
