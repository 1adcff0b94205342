/// Why reading an input source stopped: a failed `read`, or a compressed list that is
/// broken (lower case, for `sdfetch: cannot read FILE: ...`).
struct InputReadError: Error {
    let detail: String

    init(_ detail: String) {
        self.detail = detail
    }
}
