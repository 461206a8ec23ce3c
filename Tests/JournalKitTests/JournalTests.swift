// The writer: rotation under a budget, headers, reopen, close, configuration errors.
import Foundation
import PerfTestSupport
import Testing

@testable import JournalKit

@Suite struct JournalTests {
    @Test func appendThenRecoverRoundTrips() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.url)
        let entries = (0..<100).map { makeEntry($0, size: $0 * 13 % 700 + 1) }
        for entry in entries { try journal.append(entry) }
        #expect(journal.statistics.appendedEntries == 100)
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries == entries)
        #expect(recovery.headers.isEmpty)
        #expect(!recovery.tornTail && !recovery.droppedOlderEntries)
    }

    @Test func rotationUnderATinyBudgetKeepsTheNewestWithinBudget() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let budget = 4096
        let header = Data("session 7".utf8)
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: budget, segmentHeader: header))
        var maxFootprint = 0
        var worstSeen = ""
        let entries = (0..<500).map { makeEntry($0, size: 100) }
        for entry in entries {
            try journal.append(entry)
            // Statistics first: the reaper's deletions only shrink a footprint read after them.
            let statistics = journal.statistics
            let files = directory.segments().map { "\($0): \(SegmentDirectory.fileSize(directory.path + "/" + $0))" }
            let live = directory.footprint() - statistics.pendingUnlinkBytes
            if live > maxFootprint {
                maxFootprint = live
                worstSeen = "\(files) \(statistics)"
            }
        }
        journal.close()
        #expect(directory.footprint() <= budget)
        #expect(maxFootprint <= budget, "\(worstSeen)")
        let statistics = journal.statistics
        #expect(statistics.segmentsDropped > 0)
        #expect(statistics.segmentsFreed == statistics.segmentsDropped)
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries.last == entries.last)
        #expect(!recovery.entries.isEmpty && entries.suffix(recovery.entries.count).elementsEqual(recovery.entries))
        #expect(recovery.droppedOlderEntries && !recovery.gapDetected && !recovery.tornTail)
        // The header opens every surviving segment.
        #expect(recovery.headers == Array(repeating: header, count: recovery.segmentCount))
        #expect(recovery.segmentCount == 2)
    }

    @Test func reopenContinuesInANewSegment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var expected: [Data] = []
        for run in 0..<3 {
            let journal = try Journal(
                directory: directory.url, configuration: .init(segmentHeader: Data("run \(run)".utf8)))
            for index in 0..<10 {
                let entry = makeEntry(run * 100 + index)
                try journal.append(entry)
                expected.append(entry)
            }
            journal.close()
        }
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries == expected)
        #expect(recovery.headers == [Data("run 0".utf8), Data("run 1".utf8), Data("run 2".utf8)])
        #expect(directory.segments().count == 3)
    }

    /// A crash tore the tail; the next run must not append behind it or its entries would be lost.
    @Test func reopenAfterATornTailNeverAppendsBehindIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try Journal(directory: directory.url)
        try first.append(makeEntry(1))
        try first.append(makeEntry(2, size: 200))
        first.close()
        let segment = directory.segments()[0]
        try directory.write(try directory.contents(of: segment).dropLast(50), to: segment)
        let second = try Journal(directory: directory.url)
        try second.append(makeEntry(3))
        second.close()
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries == [makeEntry(1), makeEntry(3)])
        #expect(recovery.tornTail && recovery.tornSegmentCount == 1)
    }

    /// Reopening counts the segments already on disk against the budget, even with no append.
    @Test func reopenHoldsTheBudgetWithoutAppending() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let budget = 4096
        let first = try Journal(directory: directory.url, configuration: .init(byteBudget: budget))
        for index in 0..<200 { try first.append(makeEntry(index, size: 100)) }
        first.close()
        let second = try Journal(directory: directory.url, configuration: .init(byteBudget: budget))
        second.close()
        #expect(second.statistics.segmentsDropped == 1)
        #expect(second.statistics.segmentsFreed == 1)
        #expect(directory.footprint() <= budget)
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries.last == makeEntry(199, size: 100))
        #expect(!recovery.gapDetected)
    }

    @Test func closeStopsAppendsAndIsIdempotent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.url)
        try journal.append(makeEntry(1))
        journal.close()
        journal.close()
        #expect(journal.statistics.currentSegment == 0)
        #expect(throws: JournalError.self) { try journal.append(makeEntry(2)) }
        do {
            try journal.append(makeEntry(2))
        } catch let error as JournalError {
            #expect(error.code == .closed)
        }
        #expect(try Journal.recover(directory: directory.url).entries == [makeEntry(1)])
    }

    @Test func invalidEntriesAndConfigurationsAreRejected() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: JournalError.self) {
            _ = try Journal(directory: directory.url, configuration: .init(byteBudget: 512))
        }
        #expect(throws: JournalError.self) {
            _ = try Journal(directory: directory.url, configuration: .init(byteBudget: 4096, segmentHeader: Data()))
        }
        let journal = try Journal(directory: directory.url, configuration: .init(byteBudget: 4096))
        for bad in [Data(), Data(count: 2041)] {
            do {
                try journal.append(bad)
                Issue.record("an entry of \(bad.count) bytes was accepted")
            } catch let error as JournalError {
                #expect(error.code == .invalidEntry)
                #expect(error.description.contains("split it or raise byteBudget"))
            }
        }
        try journal.append(Data(count: 2040))
        #expect(try Journal.recover(directory: directory.url).entries == [Data(count: 2040)])
    }

    @Test func directoryIsCreatedPrivate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let nested = directory.url.appendingPathComponent("a/b")
        let journal = try Journal(directory: nested)
        try journal.append(makeEntry(1))
        let attributes = try FileManager.default.attributesOfItem(atPath: nested.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: nested.path).first)
        let file = try FileManager.default.attributesOfItem(atPath: nested.appendingPathComponent(segment).path)
        #expect((file[.posixPermissions] as? Int) == 0o600)
    }

    @Test func unwritableDirectoryThrowsATypedError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("file".utf8).write(
            to: directory.url.deletingLastPathComponent().appendingPathComponent(
                directory.url.lastPathComponent + ".file"))
        let blocked = URL(fileURLWithPath: directory.path + ".file/journal")
        defer { try? FileManager.default.removeItem(atPath: directory.path + ".file") }
        do {
            _ = try Journal(directory: blocked)
            Issue.record("a journal opened under a regular file")
        } catch let error as JournalError {
            #expect(error.code == .directoryUnavailable)
            #expect(error.path != nil)
            #expect(error.description.contains("writable"))
        }
    }

    @Test func fsyncDurabilityAppendsAndRecovers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: 8192, durability: .fsync))
        let entries = (0..<80).map { makeEntry($0, size: 150) }
        for entry in entries { try journal.append(entry) }
        journal.close()
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries.last == entries.last)
        #expect(entries.suffix(recovery.entries.count).elementsEqual(recovery.entries))
    }
}
