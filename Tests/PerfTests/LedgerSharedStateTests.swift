// Writers of one data directory share the ledger's size and its rotation. Each
// LedgerWriter instance maps the shared state through its own descriptor, as a process would, so
// two instances in this process behave as two processes do (flock is per open file).
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct LedgerSharedStateTests {
    static func line(_ writer: String, _ sequence: Int, padding: Int = 0) -> LedgerEvent {
        var event = LedgerEvent.sampleSpan(sequence: sequence, session: writer)
        event.detail = "/v1/" + String(repeating: "x", count: padding)
        return event
    }

    @Test func twoWritersShareOneCapAndKeepTheNewestLines() throws {
        let directory = try TemporaryDirectory("ledger-shared")
        defer { directory.remove() }
        let cap = 4_096
        let first = try LedgerWriter(directory: directory.url, capBytes: cap)
        let second = try LedgerWriter(directory: directory.url, capBytes: cap)
        // The second writer ends a line for every three of the first's (and its last three). Both
        // files stay within the cap after every line, not only at the end.
        var overCap: [String] = []
        func checkSizes(_ sequence: Int) {
            for path in [first.path, first.previousPath] {
                var status = stat()
                if stat(path, &status) == 0, Int(status.st_size) > cap {
                    overCap.append(
                        "\(path.hasSuffix(".prev") ? ".prev" : "current") \(status.st_size) B at \(sequence)")
                }
            }
        }
        for sequence in 0..<200 {
            try first.append(Self.line("w1", sequence))
            checkSizes(sequence)
            if sequence % 3 == 2 || sequence >= 197 {
                try second.append(Self.line("w2", second.statistics.linesWritten))
            }
            checkSizes(sequence)
        }
        #expect(overCap.isEmpty, "\(overCap.prefix(3))")
        let written = second.statistics.linesWritten
        let check = SharedLedgerCheck(directory: directory.url, cap: cap, sessions: ["w1"], lines: 200)
        let checkSecond = SharedLedgerCheck(directory: directory.url, cap: cap, sessions: ["w2"], lines: written)
        #expect(
            check.problems.filter { !$0.contains("unknown session") }.isEmpty, "\(check.problems) (\(check.summary))")
        #expect(checkSecond.problems.filter { !$0.contains("unknown session") }.isEmpty, "\(checkSecond.problems)")
        #expect(first.statistics.rotations + second.statistics.rotations >= 10)
    }

    /// A rotator that died between its rename and recording the new file (the lock is released
    /// with the process): the next writer to find the file full adopts what the path names, and
    /// does not delete `.prev`, which holds a whole file of lines.
    @Test func aRotationCutShortIsAdoptedNotRepeated() throws {
        let directory = try TemporaryDirectory("ledger-shared")
        defer { directory.remove() }
        let cap = 4_096
        let writer = try LedgerWriter(directory: directory.url, capBytes: cap)
        try writer.append(Self.line("w1", 0))
        // The dead rotator's rename, without the rest.
        #expect(rename(writer.path, writer.previousPath) == 0)
        // About 14 lines fill a file: the renamed one fills up, then the writer needs a new one.
        for sequence in 1..<24 { try writer.append(Self.line("w1", sequence)) }
        let previous = ledgerLines(URL(fileURLWithPath: writer.previousPath))
        let first = try #require(
            previous.first.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(first["count"] as? Int == 0, "the renamed file was kept as .prev, not deleted")
        let check = SharedLedgerCheck(directory: directory.url, cap: cap, sessions: ["w1"], lines: 24)
        #expect(check.problems.isEmpty, "\(check.problems) (\(check.summary))")
        #expect(check.kept["w1"] == Array(0..<24), "every line kept: nothing rotated out")
        #expect(writer.statistics.rotations == 0, "the file was adopted, not rotated")
    }

    /// The file deleted under two writers: the one that notices opens a new file and records it,
    /// and the other follows at its next line instead of writing into the deleted one.
    @Test func aWriterFollowsAFileAnotherWriterReplaced() throws {
        let directory = try TemporaryDirectory("ledger-shared")
        defer { directory.remove() }
        let noticing = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
        let following = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
        try following.append(Self.line("w2", 0))
        #expect(unlink(noticing.path) == 0)
        // The link count is checked every 64 lines: the 64th finds the file gone.
        for sequence in 0..<LedgerWriter.deletionCheckInterval { try noticing.append(Self.line("w1", sequence)) }
        try noticing.append(Self.line("w1", 64))
        for sequence in 1..<10 { try following.append(Self.line("w2", sequence)) }
        let kept = ledgerLines(URL(fileURLWithPath: following.path)).compactMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        let followed = kept.filter { $0["session"] as? String == "w2" }.compactMap { $0["count"] as? Int }
        #expect(followed == Array(1..<10), "the follower's lines after the replacement are in the new file")
        #expect(following.statistics.droppedLines == 0)
    }

    /// A state file with any bytes in it is reinitialised from the ledger, never trusted.
    @Test func aDamagedStateFileIsReinitialised() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        for _ in 0..<20 {
            let directory = try TemporaryDirectory("ledger-shared")
            defer { directory.remove() }
            let bytes = (0..<Int(random.next() % 5_000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            try Data(bytes).write(to: directory.file(LedgerSharedState.fileName))
            let cap = 2_048
            let writer = try LedgerWriter(directory: directory.url, capBytes: cap)
            for sequence in 0..<40 { try writer.append(Self.line("w1", sequence)) }
            let check = SharedLedgerCheck(directory: directory.url, cap: cap, sessions: ["w1"], lines: 40)
            #expect(check.problems.isEmpty, "seed \(seed): \(check.problems)")
        }
    }

    /// Seeded interleavings: three writers (as three processes) with two threads each, lines of
    /// random length, a small cap. Whatever the schedule: both files within the cap, `.prev` full,
    /// each thread's kept lines a contiguous run ending at its last, and any hole reported.
    @Test func randomInterleavingsKeepEveryInvariant() throws {
        let seed = SeededRandom.makeSeed()
        for round in 0..<4 {
            let directory = try TemporaryDirectory("ledger-shared")
            defer { directory.remove() }
            let cap = 8_192
            let writers = try (0..<3).map { _ in try LedgerWriter(directory: directory.url, capBytes: cap) }
            let lines = 400
            DispatchQueue.concurrentPerform(iterations: 6) { thread in
                var random = SeededRandom(seed: seed &+ UInt64(round * 6 + thread))
                for sequence in 0..<lines {
                    let padding = Int(random.next() % 120)
                    try? writers[thread % 3].append(Self.line("w\(thread)", sequence, padding: padding))
                }
            }
            let check = SharedLedgerCheck(
                directory: directory.url, cap: cap, sessions: (0..<6).map { "w\($0)" }, lines: lines)
            #expect(check.problems.isEmpty, "seed \(seed) round \(round): \(check.problems) (\(check.summary))")
        }
    }
}
