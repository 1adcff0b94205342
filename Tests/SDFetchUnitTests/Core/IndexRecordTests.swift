import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The index line codec on its own: exact round trips, and any damage a line can suffer
/// read as "no record", never as a wrong one or a crash.
@Suite("Index records")
struct IndexRecordTests {
    static let digest = KeyDigest(of: "http://example.test/a.png")
    static let entry = CacheEntry(
        url: "http://example.test/a.png?q=1", storedAt: Date(timeIntervalSince1970: 1_800_000_000.123456789),
        accessedAt: Date(timeIntervalSince1970: 1_800_000_100), etag: "W/\"x\\y\"\r\n", lastModified: nil,
        format: .jpeg, bytes: 12_345, width: 640, height: nil, sha256: String(repeating: "ab", count: 32),
        stamp: 1_800_000_000)

    private func parse(_ line: [UInt8]) -> IndexRecord? {
        // As the bucket reader sees it: without the newlines around it.
        let body = line.drop { $0 == 0x0A }.reversed().drop { $0 == 0x0A }.reversed()
        return Array(body).withUnsafeBytes { IndexRecord(line: $0) }
    }

    @Test("put and use lines read back exactly, escapes included, and their length is computed without encoding")
    func roundTrip() {
        let put = IndexRecord.put(Self.digest, Self.entry)
        #expect(parse(put.line) == put)
        let use = IndexRecord.use(Self.digest, usedAt: 1_800_000_200_000_000_000)
        #expect(parse(use.line) == use)
        let plain = CacheEntry(
            url: "http://example.test/b.png", storedAt: Date(timeIntervalSince1970: 1_800_000_000),
            accessedAt: Date(timeIntervalSince1970: 1_800_000_000),
            format: .png, bytes: 10, sha256: String(repeating: "0", count: 64), stamp: 1_800_000_000)
        #expect(IndexRecord.lineLength(of: plain) == IndexRecord.put(Self.digest, plain).line.count)
    }

    @Test("every truncation and every single-byte change of a line is rejected, never misread")
    func damage() {
        let line = IndexRecord.put(Self.digest, Self.entry).line
        for length in 0..<(line.count - 1) {
            #expect(parse(Array(line.prefix(length))) == nil, "prefix \(length)")
        }
        var generator = SeededRandom("IndexRecordTests")
        for index in 1..<(line.count - 1) {
            var damaged = line
            damaged[index] ^= UInt8.random(in: 1...255, using: &generator)
            if damaged[index] == 0x0A { continue }  // a split line: two shorter lines, tested above
            #expect(parse(damaged) == nil, "byte \(index)")
        }
    }

    @Test("16 hex digits read a word at a time give the value a digit at a time gives; any other byte, nil")
    func hexFields() {
        func reference(_ digits: [UInt8]) -> UInt64? {
            digits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
                ? UInt64(String(decoding: digits, as: UTF8.self), radix: 16) : nil
        }
        func read(_ digits: [UInt8]) -> UInt64? { digits.withUnsafeBytes { IndexRecord.hexValue($0) } }
        let base = Array("0123456789abcdef".utf8)
        #expect(read(base) == 0x0123_4567_89ab_cdef)
        #expect(read(Array("fedcba9876543210".utf8)) == 0xfedc_ba98_7654_3210)
        #expect(read(Array("0123456789abcde".utf8)) == nil)
        for place in base.indices {
            for byte in UInt8.min...UInt8.max {
                var digits = base
                digits[place] = byte
                #expect(read(digits) == reference(digits), "byte \(byte) at \(place)")
            }
        }
        var generator = SeededRandom("IndexRecordTests")
        for _ in 0..<2_000 {
            let digits = (0..<16).map { _ in base.randomElement(using: &generator)! }
            #expect(read(digits) == reference(digits))
        }
    }
}
