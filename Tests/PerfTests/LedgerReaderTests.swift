// The ledger reader: unknown kinds and keys, torn tails, and no crash on any byte sequence.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct LedgerReaderTests {
    private func read(_ contents: [UInt8], previous: [UInt8]? = nil) throws -> (
        [LedgerEvent], LedgerReader.Summary
    ) {
        let directory = try TemporaryDirectory("reader")
        defer { directory.remove() }
        try Data(contents).write(to: directory.ledger)
        if let previous { try Data(previous).write(to: directory.previous) }
        return try LedgerReader(directory: directory.url, maximumLineBytes: 10 * 1024 * 1024).readAll()
    }

    private func line(_ event: LedgerEvent) -> [UInt8] {
        var bytes: [UInt8] = []
        LedgerEncoder.encodeLine(event, into: &bytes)
        return bytes
    }

    @Test func readsThePreviousFileFirst() throws {
        let (events, summary) = try read(line(.sampleSpan(sequence: 2)), previous: line(.sampleSpan(sequence: 1)))
        #expect(events.map(\.count) == [1, 2])
        #expect(summary.events == 2)
    }

    @Test func missingFilesReadAsEmpty() throws {
        let directory = try TemporaryDirectory("reader")
        defer { directory.remove() }
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.isEmpty && summary == LedgerReader.Summary())
    }

    @Test func unknownKindsAreSkippedButCountedAndUnknownKeysKept() throws {
        let text =
            #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"teleport","name":"x"}"# + "\n"
            + #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"note","name":"n","#
            + #""suppressedCount":3,"nested":{"a":[1,{"b":null}]},"gone":null,"ratio":0.5,"tags":["a","b"]}"# + "\n"
        let (events, summary) = try read(Array(text.utf8))
        #expect(summary.unknownKinds == 1 && summary.events == 1)
        // An object is kept (a span's `profile`), without the mixed array inside it.
        #expect(
            events.first?.extra == [
                "suppressedCount": .int(3), "ratio": .double(0.5), "tags": .strings(["a", "b"]), "nested": .object([:]),
            ])
        let directory = try TemporaryDirectory("reader")
        defer { directory.remove() }
        try Data(text.utf8).write(to: directory.ledger)
        let all = try LedgerReader(directory: directory.url).readAll(includingUnknownKinds: true)
        #expect(all.events.map(\.kind.rawValue) == ["teleport", "note"])
    }

    /// A kill can cut a write short at a page boundary, and another process's next line then
    /// lands on the fragment's line: that line is read, the fragment counted. Every cut of a real
    /// line before it, at every byte, and a fragment of a line with a nested object.
    @Test func aWholeLineAppendedToAFragmentIsStillRead() throws {
        let nested =
            #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"note","name":"n","#
            + #""nested":{"a":[1,{"b":null}]},"ratio":0.5}"#
        for torn in [line(.sampleSpan(sequence: 1)).dropLast(), Array(nested.utf8)[...]] {
            for cut in 1..<torn.count {
                let bytes = Array(torn.prefix(cut)) + line(.sampleSpan(sequence: 2)) + line(.sampleSpan(sequence: 3))
                let (events, summary) = try read(bytes)
                #expect(events.map(\.count) == [2, 3], "cut at \(cut)")
                #expect(summary.malformedLines == 1 && summary.gluedLines == 1 && summary.events == 2, "cut at \(cut)")
            }
        }
    }

    /// What is not a fragment before a whole line stays malformed: an event-shaped object nested
    /// in a line (it does not reach the line's end), garbage, and a line with more than
    /// `maximumFragmentSplits` places to try before its whole line.
    @Test func onlyAWholeLineAtTheEndIsReadFromBehindAFragment() throws {
        let inner = #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"note","name":"n"}"#
        let wrapped = #"{"v":"x","inner":"# + inner + "}\n"
        let garbage = "{\"{\"{\"\n"
        // The line's own start is never a place to try: the first of these `{"` costs no try.
        let crowded = String(repeating: #"{"a":"#, count: LedgerReader.maximumFragmentSplits + 1) + inner + "\n"
        let reachable = String(repeating: #"{"a":"#, count: LedgerReader.maximumFragmentSplits) + inner + "\n"
        let (events, summary) = try read(Array((wrapped + garbage + crowded + reachable).utf8))
        #expect(events.count == 1)
        #expect(summary.malformedLines == 4 && summary.gluedLines == 1)
    }

    @Test func aFinalLineWithoutNewlineIsTornAndDropped() throws {
        var bytes = line(.sampleSpan(sequence: 1)) + line(.sampleSpan(sequence: 2))
        bytes.removeLast()
        let (events, summary) = try read(bytes)
        #expect(events.map(\.count) == [1])
        #expect(summary.tornTail == 1 && summary.malformedLines == 0)
    }

    @Test(arguments: [
        #"{"v":1,"ts":"bad","session":"s","kind":"span","name":"x"}"#,
        #"{"v":"1","ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span","name":"x"}"#,
        #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span","name":"x","count":"many"}"#,
        #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span"}"#,
        #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span","name":"x"} trailing"#,
        #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span","name":"\ud800"}"#,
        #"{"v":1,"ts":"2026-12-02T13:00:00.123Z","session":"s","kind":"span","name":"x",}"#,
        #"[1,2,3]"#, "", "null", #"{"v":01}"#, #"{"v":1e999}"#,
    ])
    func malformedLinesAreCountedNotDelivered(text: String) throws {
        let good = line(.sampleSpan(sequence: 9))
        let (events, summary) = try read(Array(text.utf8) + [0x0A] + good)
        #expect(events.map(\.count) == [9])
        #expect(summary.malformedLines == 1)
    }

    @Test func invalidUTF8IsMalformed() throws {
        var bad = line(.sampleSpan(sequence: 1))
        let index = try #require(bad.firstIndex(of: UInt8(ascii: "/")))
        bad[index] = 0xFF
        for sequence: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            var variant = line(.sampleSpan(sequence: 1))
            variant.replaceSubrange(index...index, with: sequence)
            let (events, summary) = try read(variant + line(.sampleSpan(sequence: 2)))
            #expect(events.map(\.count) == [2] && summary.malformedLines == 1, "\(sequence)")
        }
    }

    @Test func deepNestingIsRejectedWithoutRecursingFurther() throws {
        let depth = 100_000
        let nested =
            Array(#"{"v":1,"x":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: depth)
            + Array(repeating: UInt8(ascii: "]"), count: depth) + Array("}\n".utf8)
        let (events, summary) = try read(nested + line(.sampleSpan(sequence: 3)))
        #expect(events.map(\.count) == [3] && summary.malformedLines == 1)
    }

    @Test func aTenMegabyteLineIsSkippedAndTheNextLineRead() throws {
        let long =
            Array(#"{"v":1,"detail":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 10 * 1024 * 1024)
            + Array("\"}\n".utf8)
        let (events, summary) = try read(long + line(.sampleSpan(sequence: 4)))
        #expect(events.map(\.count) == [4] && summary.malformedLines == 1)
        let (unterminated, tornSummary) = try read(line(.sampleSpan(sequence: 5)) + long.dropLast())
        #expect(unterminated.map(\.count) == [5] && tornSummary.tornTail == 1)
    }

    /// Every prefix of a real ledger reads without crashing: whole lines are delivered and the
    /// cut line is a torn tail.
    @Test func truncationAtEveryOffsetDeliversTheWholeLines() throws {
        var hang = LedgerEvent(kind: .hang, name: "main", session: "s", timestampMs: 1_796_216_400_000)
        hang.stack = ["a \"quoted\" frame", "é😀"]
        hang.fatal = false
        let lines = [line(.sampleSpan(sequence: 1)), line(hang), line(.sampleSpan(sequence: 2))]
        let sample = lines.flatMap { $0 }
        var boundaries: [Int] = []
        var offset = 0
        for each in lines {
            offset += each.count
            boundaries.append(offset)
        }
        let directory = try TemporaryDirectory("reader")
        defer { directory.remove() }
        let reader = LedgerReader(directory: directory.url)
        for cut in 0...sample.count {
            try Data(sample[..<cut]).write(to: directory.ledger)
            let (events, summary) = try reader.readAll()
            let complete = boundaries.filter { $0 <= cut }.count
            #expect(events.count == complete, "cut at \(cut)")
            #expect(summary.tornTail == (boundaries.contains(cut) || cut == 0 ? 0 : 1), "cut at \(cut)")
            #expect(summary.malformedLines == 0, "cut at \(cut)")
        }
    }

    @Test func randomBytesNeverCrashTheReader() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let directory = try TemporaryDirectory("reader")
        defer { directory.remove() }
        let reader = LedgerReader(directory: directory.url)
        let sample = line(.sampleSpan(sequence: 1))
        let structural = Array(#"{}[]",:\u0tfn-1.e"#.utf8)
        for round in 0..<400 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:
                bytes = (0..<Int.random(in: 0...2000, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            case 1:
                bytes = sample
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 2:
                bytes = (0..<Int.random(in: 0...400, using: &random)).map { _ in
                    structural.randomElement(using: &random)!
                }
            default:
                // A damaged fragment with a whole line appended to it.
                bytes = Array(sample.prefix(Int.random(in: 1..<sample.count - 1, using: &random)))
                for _ in 0..<Int.random(in: 0...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                bytes.removeAll { $0 == 0x0A }
                bytes += sample
            }
            try Data(bytes).write(to: directory.ledger)
            let (events, summary) = try reader.readAll()
            let newlines = bytes.filter { $0 == 0x0A }.count
            // A line read from behind a fragment is the only line counted twice.
            #expect(
                summary.events + summary.malformedLines + summary.unknownKinds - summary.gluedLines <= newlines + 1,
                "seed \(seed) round \(round)")
            #expect(summary.gluedLines <= summary.malformedLines, "seed \(seed) round \(round)")
            #expect(events.count == summary.events, "seed \(seed) round \(round)")
            if round % 4 == 3 { #expect(events.count == 1, "seed \(seed) round \(round)") }
        }
    }
}
