/// The pixels that the decodes in flight may hold at once, one budget for the whole
/// process (<doc:Security#Pixel-budget>): a list of tiny images declaring huge canvases,
/// each within `--max-pixels`, must not take cores x a gigabyte.
///
/// A decode takes its share once its header told it the size of what it will allocate,
/// before allocating, and gives it back when its resize ends (``PixelLease``). A share that
/// does not fit waits, on its thread, until enough is given back; shares are granted in the
/// order they were asked for, so a large one is not starved by a stream of small ones. A
/// share over the whole budget (an image within `--max-pixels` but larger than the budget)
/// is cut to the budget: it runs alone.
///
/// Blocks the calling thread while it waits: call it from a thread that may wait (the
/// CLI's decode pool, a ``BlockingPool``), never from the cooperative pool.
///
/// `@unchecked Sendable`: every stored `var` is read and written only while `condition` is
/// locked.
final class PixelBudget: @unchecked Sendable {
    /// The process's budget: 64 Mi pixels, 256 MiB as RGBA. Two 20-megapixel photos (the
    /// largest the bench's thumbnail case resizes) decode side by side; the default
    /// `--max-pixels` image (100 M) runs alone.
    static let shared = PixelBudget(capacity: 1 << 26)

    let capacity: Int64
    private let condition = ConditionLock()
    private var inUse: Int64 = 0
    /// The most ever held at once, for tests.
    private var peak: Int64 = 0
    /// Tickets in the order shares were asked for; `serving` is the next to be granted.
    private var issued: UInt64 = 0
    private var serving: UInt64 = 0

    init(capacity: Int64) {
        precondition(capacity > 0, "a budget needs room for a pixel")
        self.capacity = capacity
    }

    /// Waits until `pixels` (at most the whole budget) fit, takes them and returns the
    /// share taken, to be handed back to ``give(_:)``.
    func take(_ pixels: Int64) -> Int64 {
        let share = min(max(pixels, 0), capacity)
        condition.withLock {
            let ticket = issued
            issued += 1
            while ticket != serving || inUse + share > capacity { condition.wait() }
            serving += 1
            inUse += share
            peak = max(peak, inUse)
            // The next ticket may fit beside this one.
            condition.broadcast()
        }
        return share
    }

    /// Hands back a share ``take(_:)`` returned.
    func give(_ share: Int64) {
        condition.withLock {
            inUse -= share
            precondition(inUse >= 0, "a share given back twice")
            condition.broadcast()
        }
    }

    /// The most pixels held at once so far.
    var peakInUse: Int64 { condition.withLock { peak } }
}

/// One resize's share of a ``PixelBudget``: taken by the decoder once it knows its sizes
/// (``take(_:)``), given back when the resize ends (``end()``), so the copies the later
/// steps make (turned upright, flattened, resampled) are covered by it too. Used on the
/// thread of its resize only.
final class PixelLease {
    private let budget: PixelBudget
    private var share: Int64 = 0
    private var hasTaken = false

    init(_ budget: PixelBudget) {
        self.budget = budget
    }

    /// Takes `pixels`, waiting for them; once per resize.
    func take(_ pixels: Int64) {
        precondition(!hasTaken, "a resize takes its share once")
        hasTaken = true
        share = budget.take(pixels)
    }

    func end() {
        budget.give(share)
        share = 0
    }
}
