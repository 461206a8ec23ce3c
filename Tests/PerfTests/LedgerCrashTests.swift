// SIGKILL a real child process in the middle of appending: every acknowledged line survives.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct LedgerCrashTests {
    /// Starts `perf-test-child ledger-spans`, waits for `acknowledgements` acks, SIGKILLs it,
    /// and returns the highest acknowledged sequence number.
    private func killChild(directory: URL, run: Int, after acknowledgements: Int) throws -> Int {
        let child = try ChildProcess(
            executable: BuildProducts.testChild, arguments: ["ledger-spans", directory.path, String(run)])
        var received: [String] = []
        while received.count < acknowledgements, let line = child.readLine(timeoutSeconds: 60) {
            received.append(line)
        }
        child.killAndWait()
        #expect(ChildProcess.terminatingSignal(child.wait()) == SIGKILL, "run \(run) exited on its own")
        // Acks read after the kill are still acknowledged: count every complete one.
        let acks = (received + child.readRemainingLines()).compactMap { Int($0.dropFirst(4)) }
        #expect(acks == Array(0..<acks.count), "run \(run): acks out of order")
        return acks.count - 1
    }

    @Test func everyAcknowledgedLineSurvivesSIGKILLAndATornTailIsDropped() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let directory = try TemporaryDirectory("crash")
        defer { directory.remove() }
        var acknowledged: [Int: Int] = [:]
        for run in 0..<20 {
            acknowledged[run] = try killChild(
                directory: directory.url, run: run, after: Int.random(in: 1...300, using: &random))
        }
        // A kill in the middle of a write(2) leaves part of a line; simulate the worst case.
        let handle = try FileHandle(forWritingTo: directory.ledger)
        handle.seekToEndOfFile()
        handle.write(Data(#"{"budgetMs":1000,"count":99999,"durationMs":15"#.utf8))
        try handle.close()
        let (torn, tornSummary) = try LedgerReader(directory: directory.url).readAll()
        let fragments = Self.fragments(in: directory.ledger)
        #expect(tornSummary.tornTail == 1 && !fragments.endsWithNewline, "seed \(seed)")
        #expect(tornSummary.malformedLines == fragments.cutShort && tornSummary.gluedLines == 0, "seed \(seed)")
        try expectAcknowledged(acknowledged, in: torn, seed: seed)
        // The next writer ends the fragment so its own lines read back whole.
        acknowledged[20] = try killChild(directory: directory.url, run: 20, after: 5)
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        let after = Self.fragments(in: directory.ledger)
        #expect(after.cutShort == fragments.cutShort + 1, "seed \(seed): the fragment was not ended")
        #expect(summary.malformedLines == after.cutShort && summary.gluedLines == 0, "seed \(seed)")
        #expect(summary.tornTail == (after.endsWithNewline ? 0 : 1), "seed \(seed)")
        try expectAcknowledged(acknowledged, in: events, seed: seed)
    }

    /// How many of the ledger's ended lines do not parse, and whether it ends with `\n`. A kill can cut a
    /// `write(2)` short (Linux stops a write between pages when a fatal signal is pending: 3 of 30
    /// runs of 20 kills did here), so a line may be cut short, and the next writer ends it; every
    /// line that does not parse must be such a start of a line, never lines mixed together.
    private static func fragments(in ledger: URL) -> (cutShort: Int, endsWithNewline: Bool) {
        let lines = ledgerLines(ledger)
        let endsWithNewline = lines.reduce(0) { $0 + $1.count + 1 } == fileSize(ledger)
        let start = Data(#""budgetMs":1000,"count":"#.utf8)
        var cutShort = 0
        for line in endsWithNewline ? lines[...] : lines.dropLast() {
            guard Array(line).withUnsafeBufferPointer({ LedgerEvent.parse(line: $0) }) == nil else { continue }
            // One start of a line, or two when the test's own fragment follows a kill's; a cut
            // may fall inside the first key.
            let pieces = line.split(separator: 0x7B, omittingEmptySubsequences: false)
            #expect(
                pieces.first?.isEmpty == true && (2...3).contains(pieces.count)
                    && pieces.dropFirst().allSatisfy { $0.prefix(start.count).elementsEqual(start.prefix($0.count)) },
                "not a cut-short line: \(String(decoding: line, as: UTF8.self))")
            cutShort += 1
        }
        return (cutShort, endsWithNewline)
    }

    /// Another process's line appended to a fragment that a killed writer left (it cannot know)
    /// is still read: the fragment is counted, the line delivered.
    @Test func aLineAnotherWriterAppendsToAKilledWritersFragmentIsRead() throws {
        let directory = try TemporaryDirectory("glued")
        defer { directory.remove() }
        let survivor = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
        try survivor.append(.sampleSpan(sequence: 1))
        var killed: [UInt8] = []
        LedgerEncoder.encodeLine(.sampleSpan(sequence: 2, session: "killed"), into: &killed)
        let handle = try FileHandle(forWritingTo: directory.ledger)
        handle.seekToEndOfFile()
        handle.write(Data(killed.prefix(killed.count / 2)))
        try handle.close()
        try survivor.append(.sampleSpan(sequence: 3))
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.map(\.count) == [1, 3])
        #expect(summary.malformedLines == 1 && summary.gluedLines == 1 && summary.tornTail == 0)
    }

    private func expectAcknowledged(_ acknowledged: [Int: Int], in events: [LedgerEvent], seed: UInt64) throws {
        var written: [Int: [Int]] = [:]
        for event in events {
            guard case .int(let run)? = event.extra["run"], let sequence = event.count else { continue }
            written[Int(run), default: []].append(sequence)
        }
        for (run, last) in acknowledged {
            let sequences = written[run] ?? []
            // The file holds a gapless prefix 0...n with n ≥ the last acknowledgement.
            #expect(sequences == Array(0..<sequences.count), "seed \(seed) run \(run)")
            #expect(sequences.count > last, "seed \(seed) run \(run): ack \(last) missing")
        }
    }
}
