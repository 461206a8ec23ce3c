// Recovery against damaged journals: every truncation point, every flipped byte, absurd
// lengths, zero-filled tails, gaps and a missing directory.
import Foundation
import PerfTestSupport
import Testing

@testable import JournalKit

@Suite struct RecoveryTests {
    /// A one-segment journal with a header and entries of assorted sizes, and the offsets at
    /// which each frame ends.
    private func smallJournal(_ directory: TemporaryDirectory, entries: [Data]) throws -> (Data, [Int]) {
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: 1 << 20, segmentHeader: Data("hdr".utf8)))
        for entry in entries { try journal.append(entry) }
        journal.close()
        let segment = try #require(directory.segments().first)
        var ends = [8 + 3]
        for entry in entries { ends.append(ends.last! + 8 + entry.count) }
        return (try directory.contents(of: segment), ends)
    }

    @Test func truncationAtEveryOffset() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entries = [1, 7, 8, 9, 40, 3, 130].enumerated().map { makeEntry($0.offset, size: $0.element) }
        let (bytes, ends) = try smallJournal(directory, entries: entries)
        #expect(bytes.count == ends.last)
        let segment = directory.segments()[0]
        for cut in 0...bytes.count {
            try directory.write(bytes.prefix(cut), to: segment)
            let recovery = try Journal.recover(directory: directory.url)
            let whole = ends.dropFirst().filter { $0 <= cut }.count
            #expect(recovery.entries == Array(entries.prefix(whole)), "cut at \(cut)")
            #expect(recovery.headers.count == (cut >= ends[0] ? 1 : 0), "cut at \(cut)")
            let onBoundary = cut == 0 || ends.contains(cut)
            #expect(recovery.tornTail == !onBoundary, "cut at \(cut)")
            #expect(recovery.bytesDiscarded == cut - (ends.last { $0 <= cut } ?? 0), "cut at \(cut)")
        }
    }

    @Test func byteFlipAtEveryOffset() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entries = (0..<6).map { makeEntry($0, size: 5 + $0 * 9) }
        let (bytes, ends) = try smallJournal(directory, entries: entries)
        let segment = directory.segments()[0]
        for offset in 0..<bytes.count {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[offset] ^= mask
                try directory.write(damaged, to: segment)
                let recovery = try Journal.recover(directory: directory.url)
                // Frames wholly before the damaged byte survive; nothing at or after it does.
                let intact = ends.dropFirst().filter { $0 <= offset }.count
                #expect(recovery.entries == Array(entries.prefix(intact)), "offset \(offset) mask \(mask)")
                #expect(recovery.tornTail, "offset \(offset) mask \(mask)")
            }
        }
    }

    @Test func absurdLengthPrefixStopsTheSegment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entries = (0..<3).map { makeEntry($0) }
        let (bytes, _) = try smallJournal(directory, entries: entries)
        for length: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFF0, UInt32(Framing.maxPayload + 1), 1 << 20] {
            var damaged = bytes
            withUnsafeBytes(of: length.littleEndian) { damaged.append(contentsOf: $0) }
            damaged.append(contentsOf: [1, 2, 3, 4, 5, 6, 7, 8, 9])
            try directory.write(damaged, to: directory.segments()[0])
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == entries, "length \(length)")
            #expect(recovery.tornTail)
        }
    }

    @Test func zeroFilledTailGivesNoPhantomEntries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entries = (0..<4).map { makeEntry($0, size: 33) }
        let (bytes, _) = try smallJournal(directory, entries: entries)
        for zeros in [1, 7, 8, 9, 4096, 65_536] {
            try directory.write(bytes + Data(count: zeros), to: directory.segments()[0])
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == entries, "\(zeros) zero bytes")
            #expect(recovery.tornTail)
            #expect(recovery.bytesDiscarded == zeros)
        }
        // A segment that is nothing but zeros holds nothing, not even a header.
        try directory.write(Data(count: 4096), to: directory.segments()[0])
        let empty = try Journal.recover(directory: directory.url)
        #expect(empty.entries.isEmpty && empty.headers.isEmpty && empty.tornTail)
    }

    /// Large entries share their segment's buffer; they must outlive the recovery and index from 0.
    @Test func recoveredEntriesOutliveTheRecoveryAndStartAtZero() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.url)
        let small = makeEntry(1, size: 20)
        let large = makeEntry(2, size: SegmentBuffer.copyThreshold + 500)
        try journal.append(small)
        try journal.append(large)
        journal.close()
        let entries = try Journal.recover(directory: directory.url).entries
        let kept = entries[1]
        let copies = (0..<100).map { _ in try? Journal.recover(directory: directory.url) }
        #expect(copies.count == 100)
        #expect(kept == large)
        #expect(kept.startIndex == 0 && entries[0].startIndex == 0)
        #expect(kept[0] == large[0] && kept[kept.count - 1] == large[large.count - 1])
    }

    @Test func missingDirectoryIsAnEmptyJournal() throws {
        let directory = try TemporaryDirectory()
        let recovery = try Journal.recover(directory: directory.url.appendingPathComponent("never/created"))
        #expect(recovery.entries.isEmpty && recovery.headers.isEmpty)
        #expect(!recovery.tornTail && !recovery.droppedOlderEntries && !recovery.gapDetected)
        #expect(recovery.segmentCount == 0)
    }

    @Test func missingMiddleSegmentIsAGap() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for run in 0..<3 {
            let journal = try Journal(directory: directory.url, configuration: .init(byteBudget: 1 << 20))
            try journal.append(makeEntry(run))
            journal.close()
        }
        let before = try Journal.recover(directory: directory.url)
        #expect(before.entries == [makeEntry(0), makeEntry(1), makeEntry(2)])
        #expect(!before.gapDetected && !before.droppedOlderEntries)
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent(directory.segments()[1]))
        let after = try Journal.recover(directory: directory.url)
        #expect(after.entries == [makeEntry(0), makeEntry(2)])
        #expect(after.gapDetected && after.droppedOlderEntries)
    }

    @Test func unrelatedFilesAreIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.url)
        try journal.append(makeEntry(1))
        journal.close()
        try Data("noise".utf8).write(to: directory.url.appendingPathComponent("segment-x.journal"))
        try Data("noise".utf8).write(to: directory.url.appendingPathComponent("notes.txt"))
        #expect(try Journal.recover(directory: directory.url).entries == [makeEntry(1)])
    }
}
