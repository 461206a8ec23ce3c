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
        #expect(tornSummary.tornTail == 1 && tornSummary.malformedLines == 0, "seed \(seed)")
        try expectAcknowledged(acknowledged, in: torn, seed: seed)
        // The next writer ends the fragment so its own lines read back whole.
        acknowledged[20] = try killChild(directory: directory.url, run: 20, after: 5)
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(summary.tornTail == 0 && summary.malformedLines == 1, "seed \(seed)")
        try expectAcknowledged(acknowledged, in: events, seed: seed)
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
