import SDFetchCore

extension CurlEngine {
    /// An engine shut down when the current test ends (see ``TestScope``).
    public static func scoped(maxTransfers: Int, pacing: TransferPacing = TransferPacing()) -> CurlEngine {
        let engine = CurlEngine(maxTransfers: maxTransfers, pacing: pacing)
        TestScope.onExit { await engine.shutdown() }
        return engine
    }
}
