import Synchronization

/// Reads the run's input a second time, ahead of the intake, for host names alone: each new
/// origin met there is announced to the engine as distant (``Fetcher/expectNetwork(_:distant:)``),
/// so a dead host listed near the end of a long list has its connect timeout overlap the
/// run instead of ending it (<doc:Fetching#Retries-and-timeouts>). The intake's line queue
/// reaches ``RunIntake/lookAhead`` lines at about 2 KB each; the scout keeps each distinct
/// origin as parsed (``URLKey/origin``, a few hundred bytes at most), at most ``hostLimit``
/// of them, and an 8-byte hash of each spelling of one (userinfo, case) so lines that share
/// a spelling are parsed once; it reads the whole list.
///
/// It reads only while every network slot is taken (``NetworkQueue/untilConsumerFull()``),
/// so a run that is not network-bound (a warm one, a short list) never probes; only the
/// lines the intake has not read yet; and only inputs that can be read twice, through the
/// descriptors the intake reads (``URLListReader/reread()``): a file renamed or replaced
/// meanwhile is not what it reads. A host whose every URL turns out cached may still get
/// its one probe connection.
final class HostScout: Sendable {
    /// Input items the intake has taken so far: the scout skips as many.
    private let intakeItems = Atomic<Int>(0)

    /// Distinct origins the scout remembers; past it, it stops.
    static let hostLimit = 65_536
    /// Hashes of spellings kept at most; past it, each new spelling's line is parsed.
    static let spellingLimit = 4 * hostLimit

    /// The intake took `count` more input items.
    func intakeDidTake(_ count: Int) {
        intakeItems.add(count, ordering: .relaxed)
    }

    /// Reads `input` again from its start, once `queue`'s starter is first full, and
    /// announces the origins of the lines ahead of the intake, a batch at a time while the
    /// starter is full; returns when the input is read, the scout has met ``hostLimit``
    /// origins, or the queue is finished (the intake has read its input).
    func run(rereading input: URLListReader, queue: NetworkQueue<NetworkLine>, fetcher: Fetcher, shard: Shard?) async {
        guard await queue.untilConsumerFull(), let reader = input.reread() else { return }
        defer { reader.cancel() }
        let filter = fetcher.options.keyQueryFilter
        var announced = Set<String>()
        var spellings = Set<UInt64>()
        var read = 0
        while let batch = await reader.next(), await queue.untilConsumerFull() {
            let taken = intakeItems.load(ordering: .relaxed)
            for item in batch {
                read += 1
                guard read > taken, case .line(let line) = item, line.problem == nil, !line.isOverlong else { continue }
                let spelling = FNV1a.hash(Self.spelledOrigin(line.text).utf8)
                guard !spellings.contains(spelling), let parsed = try? URLKey(parsing: line.text) else { continue }
                let key = filter.apply(to: parsed)
                // Under --shard a host is announced by a line of the shard only.
                if let shard, !shard.contains(key.digest) { continue }
                if spellings.count < Self.spellingLimit { spellings.insert(spelling) }
                guard announced.insert(key.origin).inserted else { continue }
                fetcher.expectNetwork(key, distant: true)
            }
            if announced.count >= Self.hostLimit { return }
        }
    }

    /// The line's text up to its path, as spelled (`https://user@Host:port`): lines that
    /// share it share an origin, so only the first of them is parsed.
    static func spelledOrigin(_ text: String) -> Substring {
        let bytes = text.utf8
        var start = bytes.startIndex
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: "://".utf8)
        {
            start = bytes.index(colon, offsetBy: 3)
        }
        let end =
            bytes[start...].firstIndex { byte in
                byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
                    || byte == UInt8(ascii: "\\")
            } ?? bytes.endIndex
        return text[..<end]
    }
}
