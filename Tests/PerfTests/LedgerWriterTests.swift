// The ledger writer: permissions, exact counts under contention, rotation, gap reports.
import Foundation
import Glibc
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

@Suite struct LedgerWriterTests {
    @Test func createsTheFileWithMode0600AndAppendsReadableLines() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url)
        for sequence in 0..<10 { try writer.append(.sampleSpan(sequence: sequence)) }
        var info = stat()
        #expect(stat(directory.ledger.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.map(\.count) == Array(0..<10))
        #expect(
            summary
                == {
                    var s = LedgerReader.Summary(); s.events = 10; return s
                }())
        #expect(writer.statistics.linesWritten == 10)
        #expect(writer.statistics.bytesWritten == fileSize(directory.ledger))
    }

    @Test func sizeIsTrackedFromTheExistingFileAtOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let line = try lineLength()
        do {
            let writer = try LedgerWriter(directory: directory.url, capBytes: line * 3)
            for sequence in 0..<2 { try writer.append(.sampleSpan(sequence: sequence)) }
        }
        // A second writer starts from the 2 lines on disk: the 4th line overall must rotate.
        let writer = try LedgerWriter(directory: directory.url, capBytes: line * 3)
        try writer.append(.sampleSpan(sequence: 2))
        #expect(writer.statistics.rotations == 0)
        try writer.append(.sampleSpan(sequence: 3))
        #expect(writer.statistics.rotations == 1)
        #expect(ledgerLines(directory.previous).count == 3)
        #expect(ledgerLines(directory.ledger).count == 1)
    }

    @Test func rotationReplacesThePreviousFileAndKeepsBothUnderTheCap() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cap = try lineLength() * 4 + 10
        let writer = try LedgerWriter(directory: directory.url, capBytes: cap)
        for sequence in 0..<14 { try writer.append(.sampleSpan(sequence: sequence)) }
        #expect(writer.statistics.rotations == 3)
        #expect(fileSize(directory.ledger) <= cap && fileSize(directory.previous) <= cap)
        let (events, _) = try LedgerReader(directory: directory.url).readAll()
        // .prev holds lines 8–11, the current file 12–13: oldest first, the older file replaced.
        #expect(events.map(\.count) == Array(8..<14))
    }

    @Test func aLineLargerThanTheCapIsDroppedAndReported() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url, capBytes: 400)
        var huge = LedgerEvent.sampleSpan()
        huge.stack = Array(repeating: String(repeating: "f", count: 100), count: 10)
        #expect(throws: LedgerError.self) { try writer.append(huge) }
        try writer.append(.sampleSpan(sequence: 1))
        let (events, _) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.map(\.kind) == [.dropped, .span])
        #expect(events.first?.count == 1)
    }

    /// The contract's stress test: 8 threads × 5,000 lines into a 64 KiB cap.
    @Test func concurrentAppendsNeverInterleaveAndRespectTheCap() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cap = 64 * 1024
        let writer = try LedgerWriter(directory: directory.url, capBytes: cap)
        let failures = SharedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for sequence in 0..<5000 {
                var event = LedgerEvent.sampleSpan(sequence: thread * 5000 + sequence, session: "t\(thread)")
                event.detail = String(repeating: "x", count: sequence % 50)
                do { try writer.append(event) } catch { failures.increment() }
            }
        }
        #expect(failures.value == 0)
        #expect(writer.statistics.rotations > 0)
        for file in [directory.ledger, directory.previous] {
            #expect(fileSize(file) <= cap, "\(file.lastPathComponent) is \(fileSize(file)) bytes")
            let lines = ledgerLines(file)
            #expect(!lines.isEmpty)
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: line) as? [String: Any]
                #expect(object?["kind"] as? String == "span")
            }
        }
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(summary.malformedLines == 0 && summary.tornTail == 0)
        // Within one thread, lines appear in the order that thread wrote them.
        var last: [String: Int] = [:]
        for event in events {
            let sequence = try #require(event.count)
            #expect(sequence > last[event.session, default: -1])
            last[event.session] = sequence
        }
    }

    @Test func withALargeCapTheLineCountEqualsTheEventCountExactly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url, capBytes: 64 << 20)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for sequence in 0..<5000 {
                try? writer.append(.sampleSpan(sequence: thread * 5000 + sequence))
            }
        }
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(ledgerLines(directory.ledger).count == 40_000)
        #expect(Set(events.compactMap(\.count)) == Set(0..<40_000))
        #expect(summary.events == 40_000 && summary.malformedLines == 0)
        #expect(writer.statistics.linesWritten == 40_000 && writer.statistics.rotations == 0)
    }

    @Test func aDeletedFileIsNoticedAndReopened() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
        try writer.append(.sampleSpan(sequence: 0))
        try FileManager.default.removeItem(at: directory.ledger)
        let interval = LedgerWriter.deletionCheckInterval
        for sequence in 1...(interval + 1) { try writer.append(.sampleSpan(sequence: sequence)) }
        let (events, _) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.first?.kind == .dropped)
        #expect((events.first?.count ?? 0) >= interval - 1)
        #expect(events.last?.count == interval + 1)
    }

    @Test func anUnopenableDirectoryThrowsAnErrorThatSaysWhatToDo() {
        #expect {
            try LedgerWriter(directory: URL(fileURLWithPath: "/proc/perf-ledger-test/none"))
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == .open && error.errno != nil && error.description.contains("set PERF_DIR")
                && error.path.hasSuffix(LedgerWriter.fileName)
        }
    }

    @Test func aTornTailFromAnEarlierCrashIsTerminatedAtOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data(#"{"v":1,"kind":"span","na"#.utf8).write(to: directory.ledger)
        let writer = try LedgerWriter(directory: directory.url)
        try writer.append(.sampleSpan(sequence: 7))
        let (events, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.map(\.count) == [7])
        #expect(summary.malformedLines == 1 && summary.tornTail == 0)
    }

    @Test func appendsAfterCloseThrow() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url)
        writer.close()
        #expect(throws: LedgerError.self) { try writer.append(.sampleSpan()) }
        #expect(fileSize(directory.ledger) == 0)
    }

    private func lineLength() throws -> Int {
        var bytes: [UInt8] = []
        LedgerEncoder.encodeLine(.sampleSpan(sequence: 0), into: &bytes)
        return bytes.count
    }
}

/// A counter threads can bump without a data race.
final class SharedCounter: Sendable {
    private let storage = Mutex<Int>(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.withLock { $0 } }
}

@Suite struct LedgerWriterBatchTests {
    @Test func aBatchIsWrittenInRunsOfWholeLinesWithOneWriteEach() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try LedgerWriter(directory: directory.url, capBytes: 64 << 20)
        let events = (0..<3_000).map { LedgerEvent.sampleSpan(sequence: $0) }
        #expect(writer.append(batch: events) == 0)
        let stats = writer.statistics
        #expect(stats.linesWritten == 3_000)
        // Runs of at most 256 KiB each: as many write(2)s as runs, far fewer than lines.
        let runs = (stats.bytesWritten + LedgerWriter.batchBytes - 1) / LedgerWriter.batchBytes
        #expect(stats.writeCalls >= runs && stats.writeCalls <= runs + 1, "\(stats)")
        let (read, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(read.map(\.count) == Array(0..<3_000))
        #expect(summary.malformedLines == 0)
    }

    @Test func aBatchThatCrossesTheCapRotatesBetweenWholeLinesAndKeepsBothFilesUnderIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cap = 16 * 1024
        let writer = try LedgerWriter(directory: directory.url, capBytes: cap)
        #expect(writer.append(batch: (0..<1_000).map { LedgerEvent.sampleSpan(sequence: $0) }) == 0)
        #expect(writer.statistics.rotations > 0)
        #expect(fileSize(directory.ledger) <= cap && fileSize(directory.previous) <= cap)
        let (read, summary) = try LedgerReader(directory: directory.url).readAll()
        #expect(summary.malformedLines == 0 && summary.tornTail == 0)
        let kept = read.compactMap(\.count)
        #expect(kept == Array((1_000 - kept.count)..<1_000), "the newest lines, in order, none split")
    }

    #if DEBUG  // fault injection is compiled into debug builds only
        @Test func aFailedRunIsCountedAndReportedWithItsCause() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults), report: { _ in })
            faults.failWrites(1, errno: ENOSPC)
            #expect(writer.append(batch: (0..<50).map { LedgerEvent.sampleSpan(sequence: $0) }) == 50)
            #expect(writer.statistics.droppedLines == 50)
            try writer.append(.sampleSpan(sequence: 50))
            let (read, _) = try LedgerReader(directory: directory.url).readAll()
            let gap = try #require(read.first { $0.kind == .dropped })
            #expect(gap.count == 50)
            #expect(gap.extra["cause"] == .string(LedgerWriter.writeCause))
            #expect(read.filter { $0.kind == .span }.compactMap(\.count) == [50])
        }
    #endif
}
