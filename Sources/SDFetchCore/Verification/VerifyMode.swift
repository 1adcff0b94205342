/// How thoroughly downloaded bytes are checked (`--verify`).
public enum VerifyMode: String, Sendable, CaseIterable {
    /// Every byte's place in the format checked without decoding pixels (the default):
    /// PNG chunks and CRCs with the zlib stream inflated, JPEG markers and entropy-coded
    /// data, GIF blocks and sub-blocks, WebP RIFF chunks; header checks for the rest.
    case structure
    /// `structure`, then PNG, JPEG and GIF decoded completely.
    case full
    /// Signature and dimensions only.
    case header
    /// Signature only.
    case none
}
