// The session entry codec: round trips, forward compatibility, and a decoder that never traps.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SessionEntryCodecTests {
    static let samples: [SessionEntry] = [
        .start(SessionSamples.info(id: "00ff00ff00ff00ff")),
        .spanBegan(SessionSamples.span(id: 3)),
        .spanBegan(
            JournalledSpan(
                id: .max, name: "", key: nil, site: "ünïcødé/🚀.swift:1", budgetNanos: nil, lifetime: "indefinite",
                startWallNanos: 0)),
        .spanClosed(id: 3),
        .ongoingSet(SessionSamples.marker(id: 9, durationNanos: 1_000_000_000)),
        .ongoingSet(OngoingMarker(id: 0, kind: "", name: "", startedWallNanos: 0, lastKnownDurationNanos: .max)),
        .ongoingCleared(id: 9),
        .end(wallNanos: 1_796_000_123_000_000_000),
    ]

    @Test(arguments: samples)
    func roundTrips(_ entry: SessionEntry) throws {
        let data = SessionEntryCodec.encode(entry, sequence: 123_456)
        #expect(try SessionEntryCodec.decode(data) == SequencedEntry(sequence: 123_456, entry: entry))
    }

    @Test func entriesAreCompact() {
        #expect(SessionEntryCodec.encode(.spanClosed(id: 17), sequence: 5).count == 4)
        #expect(SessionEntryCodec.encode(.spanBegan(SessionSamples.span(id: 1)), sequence: 1000).count < 64)
    }

    @Test func unknownTypesAndNewerFormatsAreSkipped() throws {
        var unknownType = SessionEntryCodec.encode(.spanClosed(id: 1), sequence: 1)
        unknownType[1] = 200
        #expect(try SessionEntryCodec.decode(unknownType) == nil)
        var newerFormat = SessionEntryCodec.encode(.spanClosed(id: 1), sequence: 1)
        newerFormat[0] = SessionEntryCodec.format + 1
        #expect(try SessionEntryCodec.decode(newerFormat) == nil)
    }

    @Test func fieldsAppendedByALaterVersionAreIgnored() throws {
        let data = SessionEntryCodec.encode(.spanClosed(id: 42), sequence: 2) + Data([1, 2, 3, 0x80])
        #expect(try SessionEntryCodec.decode(data) == SequencedEntry(sequence: 2, entry: .spanClosed(id: 42)))
    }

    @Test func truncatedAndOverlongInputThrows() {
        let whole = SessionEntryCodec.encode(.spanBegan(SessionSamples.span(id: 1)), sequence: 1)
        for length in 0..<whole.count {
            #expect(throws: SessionEntryCodec.DecodingError.self) { try SessionEntryCodec.decode(whole.prefix(length)) }
        }
        let overlongVarint = Data([SessionEntryCodec.format, 3] + [UInt8](repeating: 0xFF, count: 11))
        #expect(throws: SessionEntryCodec.DecodingError.self) { try SessionEntryCodec.decode(overlongVarint) }
        let hugeString = Data([SessionEntryCodec.format, 2, 1, 1] + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        #expect(throws: SessionEntryCodec.DecodingError.self) { try SessionEntryCodec.decode(hugeString) }
    }

    /// Random bytes, and valid entries with random bytes flipped, cut or appended: each either
    /// decodes or throws, and whatever decodes re-encodes to a decodable entry.
    @Test(arguments: [UInt64(1), 0xDEAD_BEEF, 20_261_202])
    func decoderNeverTrapsOnAnyBytes(seed: UInt64) throws {
        var generator = SeededRandom(seed: seed)
        var decodedCount = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                let length = Int.random(in: 0...48, using: &generator)
                bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // Steer half of them past the format and type checks, into the field decoders.
                if bytes.count >= 2 && round.isMultiple(of: 4) {
                    bytes[0] = SessionEntryCodec.format
                    bytes[1] = UInt8.random(in: 1...6, using: &generator)
                }
            } else {
                let sample = Self.samples.randomElement(using: &generator)!
                bytes = [UInt8](SessionEntryCodec.encode(sample, sequence: generator.next()))
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) {
                    bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator))
                }
            }
            do {
                guard let decoded = try SessionEntryCodec.decode(Data(bytes)) else { continue }
                decodedCount += 1
                let again = try SessionEntryCodec.decode(
                    SessionEntryCodec.encode(decoded.entry, sequence: decoded.sequence))
                #expect(again == decoded, "seed \(seed), round \(round), bytes \(bytes)")
            } catch {
                continue
            }
        }
        // The fuzzer must reach the decoders' success paths too, not only their first check.
        #expect(decodedCount > 100, "seed \(seed): only \(decodedCount) inputs decoded")
    }
}
