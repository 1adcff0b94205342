import Testing

@testable import SDFetchCore

@Suite("splitting a batch over the cores")
struct BatchSplitTests {
    @Test(
        "results come back complete and in the batch's order, split or not", arguments: [0, 1, 63, 64, 65, 257, 1000])
    func keepsOrder(count: Int) async {
        let items = Array(0..<count)
        let mapped = await BatchSplit.map(items) { $0 * 3 + 1 }
        #expect(mapped == items.map { $0 * 3 + 1 })
    }
}
