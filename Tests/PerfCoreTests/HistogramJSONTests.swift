// The histogram's JSON form: round trips, the exact shape, and a parser that never traps.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct HistogramJSONTests {
    static func sampleHistogram(seed: UInt64, values: Int = 5_000) -> LatencyHistogram {
        var random = SeededRandom(seed: seed)
        var histogram = LatencyHistogram()
        for _ in 0..<values {
            histogram.record(nanos: 1_000 + random.next() % 40_000_000, count: 1 + random.next() % 3)
        }
        return histogram
    }

    @Test func roundTripsThroughJSONStringAndCodable() throws {
        let seed = SeededRandom.makeSeed()
        let histogram = Self.sampleHistogram(seed: seed)
        #expect(try LatencyHistogram(json: histogram.jsonString) == histogram, "seed \(seed)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(histogram)
        #expect(String(decoding: encoded, as: UTF8.self) == histogram.jsonString, "seed \(seed)")
        #expect(try JSONDecoder().decode(LatencyHistogram.self, from: encoded) == histogram, "seed \(seed)")
        #expect(try LatencyHistogram(json: LatencyHistogram().jsonString) == LatencyHistogram())
    }

    @Test func writesTheCompactSparseShape() {
        var histogram = LatencyHistogram()
        histogram.record(nanos: 1_000_000, count: 2)
        histogram.record(nanos: 3_000)
        let low = HistogramLayout.index(ofNanos: 3_000)
        let high = HistogramLayout.index(ofNanos: 1_000_000)
        #expect(
            histogram.jsonString
                == "{\"buckets\":[[\(low),1],[\(high),2]],\"count\":3,\"lo\":9,\"max\":1000000,\"min\":3000,"
                + "\"sub\":64,\"sum\":2003000,\"v\":1}")
    }

    @Test func acceptsUnknownKeysAndWhitespace() throws {
        let json = """
            { "v": 1, "sub": 64, "lo": 9, "count": 1, "sum": 5000, "min": 5000, "max": 5000,
              "buckets": [[\(HistogramLayout.index(ofNanos: 5_000)), 1]], "unit": "ns" }
            """
        let histogram = try LatencyHistogram(json: json)
        #expect(histogram.count == 1 && histogram.minNanos == 5_000)
    }

    @Test(arguments: [
        ("{\"v\":2,\"sub\":64,\"lo\":9,\"count\":0,\"sum\":0,\"min\":0,\"max\":0,\"buckets\":[]}", "v2"),
        ("{\"v\":1,\"sub\":32,\"lo\":9,\"count\":0,\"sum\":0,\"min\":0,\"max\":0,\"buckets\":[]}", "sub=32"),
        (
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":2,\"sum\":2000,\"min\":1000,\"max\":1000,\"buckets\":[[61,1]]}",
            "differs"
        ),
        (
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":1,\"sum\":1000,\"min\":1000,\"max\":1000,\"buckets\":[[99999,1]]}",
            "pair"
        ),
        (
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":1,\"sum\":1000,\"min\":1000,\"max\":1000,\"buckets\":[[61]]}",
            "pair"
        ),
        ("{\"v\":1,\"sub\":64,\"lo\":9,\"count\":1,\"sum\":9,\"min\":1000,\"max\":1000,\"buckets\":[[61,1]]}", "sum"),
        (
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":1,\"sum\":1000,\"min\":1000,\"max\":1000,\"buckets\":[[62,1]]}",
            "first and last"
        ),
        ("{\"v\":1,\"sub\":64,\"lo\":9,\"count\":0,\"sum\":0,\"min\":0,\"max\":0}", "missing key \"buckets\""),
        ("{\"v\":1,\"sub\":64,\"lo\":9,\"count\":-1,\"sum\":0,\"min\":0,\"max\":0,\"buckets\":[]}", "cannot read"),
        ("[1,2,3]", "cannot read"),
    ])
    func rejectsInvalidInputWithAnExplanation(json: String, expectedFragment: String) {
        #expect(HistogramLayout.index(ofNanos: 1_000) == 61)
        do {
            let histogram = try LatencyHistogram(json: json)
            Issue.record("accepted invalid JSON as \(histogram.jsonString)")
        } catch {
            #expect(error.message.contains(expectedFragment), "message: \(error.message)")
        }
    }

    @Test func rejectsAdversarialInputWithoutTrapping() {
        let adversarial = [
            String(repeating: "[", count: 100_000),
            "{\"v\":1,\"buckets\":" + String(repeating: "[", count: 10_000) + "}",
            "{\"v\":1" + String(repeating: "9", count: 5_000) + "}",
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":18446744073709551616,\"sum\":0,\"min\":0,\"max\":0,\"buckets\":[]}",
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":2,\"sum\":0,\"min\":0,\"max\":0,"
                + "\"buckets\":[[0,18446744073709551615],[1,18446744073709551615]]}",
            "{\"v\":1,\"sub\":64,\"lo\":9,\"count\":1,\"sum\":1e400,\"min\":0,\"max\":0,\"buckets\":[[0,1]]}",
            "\u{0}\u{FFFF}\"",
            "",
        ]
        for json in adversarial {
            #expect(throws: HistogramJSONError.self) { try LatencyHistogram(json: json) }
        }
    }

    @Test func parserNeverTrapsOnRandomOrMutatedInput() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let valid = Array(Self.sampleHistogram(seed: seed, values: 40).jsonString.utf8)
        let alphabet = Array("{}[],:\"0123456789-+.eE vsubcountminmaxlo".utf8)
        var accepted = 0
        for round in 0..<10_000 {
            var bytes: [UInt8]
            if round % 3 == 0 {
                bytes = (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = valid
                for _ in 0..<(1 + random.next() % 4) {
                    let position = Int(random.next() % UInt64(bytes.count + 1))
                    switch random.next() % 4 {
                    case 0 where position < bytes.count: bytes.remove(at: position)
                    case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                    case 2 where position < bytes.count:
                        bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    default: bytes = Array(bytes[..<position])
                    }
                }
            }
            if let histogram = try? LatencyHistogram(json: String(decoding: bytes, as: UTF8.self)) {
                // Whatever is accepted must be a histogram that survives its own round trip.
                accepted += 1
                #expect((try? LatencyHistogram(json: histogram.jsonString)) == histogram, "seed \(seed)")
                #expect(histogram.nonEmptyBuckets.reduce(0) { $0 + $1.count } == histogram.count, "seed \(seed)")
            }
        }
        #expect(accepted < 10_000, "seed \(seed)")
    }
}
