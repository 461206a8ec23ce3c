// The ledger line format: the contract's exact bytes, key order, escaping and timestamps.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct LedgerEncoderTests {
    private func encode(_ event: LedgerEvent) -> String {
        var bytes: [UInt8] = []
        LedgerEncoder.encodeLine(event, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        (0.000025, "0.000025"), (-0.000025, "-0.000025"), (1.5e-7, "0.00000015"), (1e-5, "0.00001"),
        (123.25, "123.25"), (1e21, "1000000000000000000000"), (1.25e17, "125000000000000000"),
        (Double.leastNonzeroMagnitude, "0." + String(repeating: "0", count: 323) + "5"),
    ])
    func doublesAreWrittenInPlainDecimal(_ value: Double, _ text: String) {
        var bytes: [UInt8] = []
        LedgerEncoder.appendDouble(value, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == text)
    }

    /// The exponent-removing step on its own: signs, a capital E, no point, and text it must pass
    /// through unchanged because the exponent is not one.
    @Test(arguments: [
        ("2.5e-05", "0.000025"), ("-1.5E+3", "-1500"), ("1e21", "1000000000000000000000"),
        ("1.2345e2", "123.45"), ("5e-324", "0." + String(repeating: "0", count: 323) + "5"),
        ("1e", "1e"), ("1e+", "1e+"), ("1ex", "1ex"), ("1e1234567", "1e1234567"), ("12.5", "12.5"),
    ])
    func plainDecimalFromADescription(_ description: String, _ text: String) {
        var bytes: [UInt8] = []
        LedgerEncoder.appendPlain(description, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == text)
    }

    /// Whatever the magnitude, the plain text reads back as the same double and has no exponent.
    @Test func plainDecimalsRoundTripForRandomDoubles() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        for _ in 0..<5_000 {
            let exponent = Int(random.next() % 80) - 40
            let value = Double(random.next() % 1_000_000_007) * pow(10, Double(exponent)) / 997
            guard value.isFinite else { continue }
            var bytes: [UInt8] = []
            LedgerEncoder.appendDouble(value, into: &bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains("e") && Double(text) == value, "\(value) → \(text), seed \(seed)")
        }
    }

    @Test func typicalSpanMatchesTheContractExample() {
        var event = LedgerEvent.sampleSpan(sequence: 200, session: "abc")
        event.timestampMs = LedgerTimestamp.parseISO8601("2026-12-02T13:00:00.123Z")!
        #expect(
            encode(event)
                == #"{"budgetMs":1000,"count":200,"detail":"/v1/threads","durationMs":1234.5,"exit":"success","#
                + #""kind":"span","name":"api.get","session":"abc","site":"MyService/API.swift:88","#
                + #""ts":"2026-12-02T13:00:00.123Z","v":1}"# + "\n")
    }

    @Test func extraKeysAreMergedInByteOrderAndFixedKeysWin() {
        var event = LedgerEvent(kind: .note, name: "n", session: "s", timestampMs: 0)
        event.extra = [
            "zeta": .bool(true), "Alpha": .int(-3), "reason": .string("x"), "name": .string("ignored"),
            "frames": .strings(["a", "b"]), "ratio": .double(0.25), "nan": .double(.nan),
        ]
        #expect(
            encode(event)
                == #"{"Alpha":-3,"frames":["a","b"],"kind":"note","name":"n","ratio":0.25,"reason":"x","#
                + #""session":"s","ts":"1970-01-01T00:00:00.000Z","v":1,"zeta":true}"# + "\n")
    }

    @Test func nonFiniteNumbersAreOmitted() {
        var event = LedgerEvent(kind: .span, name: "n", session: "s", timestampMs: 0)
        event.durationMs = .infinity
        event.budgetMs = .nan
        event.stallMs = -.infinity
        let line = encode(event)
        #expect(!line.contains("durationMs") && !line.contains("budgetMs") && !line.contains("stallMs"))
    }

    @Test(arguments: [
        ("1970-01-01T00:00:00.000Z", Int64(0)),
        ("2026-12-02T13:00:00.123Z", Int64(1_796_216_400_123)),
        ("2000-02-29T23:59:59.999Z", Int64(951_868_799_999)),
        ("1969-12-31T23:59:59.999Z", Int64(-1)),
        ("2100-03-01T00:00:00.000Z", Int64(4_107_542_400_000)),
    ])
    func timestampsRoundTrip(text: String, ms: Int64) {
        var bytes: [UInt8] = []
        LedgerTimestamp.appendISO8601(millisecondsSinceEpoch: ms, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == text)
        #expect(LedgerTimestamp.parseISO8601(text) == ms)
    }

    @Test func timestampsAgreeWithFoundation() {
        var random = SeededRandom(seed: SeededRandom.makeSeed())
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for _ in 0..<500 {
            let ms = Int64.random(in: 0...4_102_444_800_000, using: &random)
            var bytes: [UInt8] = []
            LedgerTimestamp.appendISO8601(millisecondsSinceEpoch: ms, into: &bytes)
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
            #expect(String(decoding: bytes, as: UTF8.self) == expected, "ms \(ms)")
        }
    }

    /// Hostile strings in every string field survive the encoder, our reader and Foundation's
    /// JSONSerialization byte for byte.
    @Test func escapingRoundTripsThroughBothReaders() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let alphabet: [Unicode.Scalar] = [
            "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "\u{80}", "\u{2028}",
            "é", "€", "😀", "\u{FEFF}", "a", "Z", " ", "{", "}", "[", "]", ":", ",", "\u{10FFFF}",
        ]
        for _ in 0..<300 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                text.append(alphabet.randomElement(using: &random)!)
            }
            let string = String(text)
            var event = LedgerEvent(kind: .note, name: string, session: string, timestampMs: 1)
            event.detail = string
            event.stack = [string, string]
            event.extra = ["k\(string)": .string(string)]
            var bytes: [UInt8] = []
            LedgerEncoder.encodeLine(event, into: &bytes)
            #expect(bytes.last == UInt8(ascii: "\n"))
            #expect(bytes.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "seed \(seed)")
            let parsed = bytes.dropLast().withUnsafeBufferPointer { LedgerEvent.parse(line: $0) }
            #expect(parsed == event, "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
            let object = try JSONSerialization.jsonObject(with: Data(bytes.dropLast())) as? [String: Any]
            #expect(object?["detail"] as? String == string, "seed \(seed)")
            #expect(object?["k\(string)"] as? String == string, "seed \(seed)")
        }
    }

    /// Every schema key is found by its name, and nothing else is: the reader asks this of each
    /// key of every line, and the encoder writes the same names from its static bytes.
    @Test func fixedKeysAreFoundByTheirNamesOnly() {
        for key in LedgerEncoder.FixedKey.allCases {
            #expect(LedgerEncoder.FixedKey(name: key.name) == key, "\(key.name)")
            #expect(String(describing: key.json) == ",\"\(key.name)\":")
            #expect(LedgerEncoder.FixedKey(name: String(key.name.dropLast())) == nil, "\(key.name) shortened")
            #expect(LedgerEncoder.FixedKey(name: key.name + "s") == nil, "\(key.name) lengthened")
            #expect(LedgerEncoder.FixedKey(name: key.name.uppercased()) == nil, "\(key.name) in capitals")
        }
        #expect(LedgerEncoder.FixedKey(name: "") == nil)
        #expect(
            LedgerEncoder.FixedKey.allCases.map(\.name)
                == LedgerEncoder.FixedKey.allCases.map(\.name).sorted {
                    $0.utf8.lexicographicallyPrecedes($1.utf8)
                })
    }

    /// The scan that reads eight bytes at a time finds every byte to escape wherever it falls in
    /// a word, and nothing else: each special character at every offset of strings up to 33
    /// bytes, then seeded strings of bytes next to the special ones, against a byte-by-byte
    /// reference of the escaping rules.
    @Test func quotingMatchesAByteByByteReferenceAtEveryOffset() {
        // U+FFFF starts with 0xEF as U+FEFF does but is not escaped; U+0080 is C2 80.
        let specials = ["\"", "\\", "\u{0}", "\u{1F}", "\n", "\u{7F}", "\u{FEFF}", "\u{FFFF}", "\u{80}", " ", "~"]
        for special in specials {
            for length in 0...32 {
                for offset in 0...length {
                    let text =
                        String(repeating: "a", count: offset) + special + String(repeating: "b", count: length - offset)
                    var bytes: [UInt8] = []
                    LedgerEncoder.appendQuoted(text, into: &bytes)
                    #expect(
                        bytes == Self.referenceQuoted(text), "\(special.debugDescription) at \(offset) of \(length)")
                }
            }
        }
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let neighbours: [Unicode.Scalar] = [
            "\u{1F}", " ", "!", "\"", "#", "[", "\\", "]", "~", "\u{7F}", "\u{80}", "\u{FEFF}", "\u{FEFE}", "\u{FFFF}",
            "\u{EFFF}", "\u{0}", "a",
        ]
        for _ in 0..<2_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...48, using: &random) {
                text.append(neighbours.randomElement(using: &random)!)
            }
            let string = String(text)
            var bytes: [UInt8] = []
            LedgerEncoder.appendQuoted(string, into: &bytes)
            #expect(bytes == Self.referenceQuoted(string), "seed \(seed): \(string.debugDescription)")
        }
    }

    /// The escaping rules, one byte at a time.
    private static func referenceQuoted(_ string: String) -> [UInt8] {
        let input = Array(string.utf8)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out += [UInt8(ascii: "\\"), byte]
            } else if byte < 0x20 || byte == 0x7F {
                out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            } else if byte == 0xEF, index + 2 < input.count, input[index + 1] == 0xBB, input[index + 2] == 0xBF {
                out += Array("\\ufeff".utf8)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    @Test func everyOptionalKeyRoundTrips() {
        var event = LedgerEvent(kind: .hang, name: "main", session: "s", timestampMs: 1_796_216_400_000)
        event.durationMs = 0.125
        event.lowerMs = 250
        event.upperMs = 310.5
        event.stallMs = 280.25
        event.fatal = true
        event.suppressed = "process stopped"
        event.thread = "main"
        event.stack = ["frame 0", "frame 1"]
        event.stuckFrames = ["frame 1"]
        event.culprit = "frame 1"
        event.exit = "failure"
        event.extra = ["pid": .int(42), "big": .double(1e300), "tiny": .double(-2.5e-12), "ok": .bool(false)]
        var bytes: [UInt8] = []
        LedgerEncoder.encodeLine(event, into: &bytes)
        let parsed = bytes.dropLast().withUnsafeBufferPointer { LedgerEvent.parse(line: $0) }
        #expect(parsed == event)
    }
}
