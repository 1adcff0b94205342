import FoundationEssentials
import Glibc

/// What standard error can show: a redrawn bar, colour, and how wide a line may be.
///
/// Decided once per run from `isatty(STDERR_FILENO)`, `TERM=dumb`, `NO_COLOR`,
/// `--progress` and `-q`, like swift-format's `TTY.swift`.
struct Terminal: Sendable {
    /// Draw the redrawn progress line.
    var showsBar: Bool
    /// ANSI colour is allowed on standard error.
    var usesColour: Bool

    init(environment: ProcessEnvironment, progress: ProgressMode, quiet: Bool) {
        switch progress {
        case _ where quiet: showsBar = false
        case .never: showsBar = false
        case .always: showsBar = true
        case .auto: showsBar = environment.isStandardErrorTerminal && !environment.isDumbTerminal
        }
        usesColour = environment.isStandardErrorTerminal && !environment.forbidsColour
    }

    /// Columns of the terminal on standard error (`TIOCGWINSZ`), else `$COLUMNS`, else 80.
    static func width(environment: ProcessEnvironment) -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = environment.variables["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }

    /// SGR colours used on standard error.
    enum Colour: String {
        case green = "32"
        case cyan = "36"
        case red = "31"
        case dim = "2"
    }

    /// `text` wrapped in `colour` when colour is allowed.
    func paint(_ text: String, _ colour: Colour) -> String {
        usesColour ? "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m" : text
    }
}
