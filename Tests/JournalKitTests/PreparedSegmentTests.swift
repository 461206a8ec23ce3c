// The segment the preparer makes ready (created, header written) before rotation needs it: what
// recovery makes of one a crash left behind, numbering after it, and a failed preparation.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import JournalKit

@Suite struct PreparedSegmentTests {
    /// Made on each use, not kept in a static or a test argument: LeakSanitizer cannot see a
    /// Data's storage through the tag bits of its enum, so a Data that lives to the process's end
    /// is reported as leaked (see JournalKit's own header, kept as bytes for the same reason).
    static var header: Data { Data("prepared-test header".utf8) }

    /// Budget 4096: segments rotate at 2048 bytes; 100-byte entries (108-byte frames) ask for
    /// the next segment at the 10th entry and rotate at the 19th (with or without the header).
    static func configuration(header: Data?, durability: Journal.Durability = .processDeath) -> Journal.Configuration {
        .init(byteBudget: 4096, durability: durability, segmentHeader: header)
    }

    /// Appends until the next segment is asked for, then waits for the preparer to make it ready.
    static func appendUntilPrepared(_ journal: Journal, entries: inout [Data]) throws {
        for index in 0..<10 {
            let entry = makeEntry(index, size: 100)
            try journal.append(entry)
            entries.append(entry)
        }
        #expect(pollUntil(seconds: 10) { journal.preparer.readyNumber == 2 }, "segment 2 was never prepared")
    }

    /// The files of `directory` copied to `snapshot`: what SIGKILL would leave at this instant
    /// (the page cache is the file system's view of the files).
    static func copyFiles(of directory: TemporaryDirectory, to snapshot: TemporaryDirectory) throws {
        try FileManager.default.createDirectory(at: snapshot.url, withIntermediateDirectories: true)
        for name in directory.segments() {
            try FileManager.default.copyItem(
                at: directory.url.appendingPathComponent(name), to: snapshot.url.appendingPathComponent(name))
        }
    }

    /// A crash between preparing a segment and its first use leaves a file holding only a
    /// header (or nothing, without a header): recovery returns no spurious entry, no torn tail,
    /// no gap, and that segment's header as it does for every surviving segment.
    @Test(arguments: [true, false])
    func aPreparedSegmentLeftByACrashRecoversAsEmpty(withHeader: Bool) throws {
        let header = withHeader ? Self.header : nil
        let directory = try TemporaryDirectory()
        let snapshot = try TemporaryDirectory("snapshot")
        defer {
            directory.remove()
            snapshot.remove()
        }
        let journal = try Journal(directory: directory.url, configuration: Self.configuration(header: header))
        var entries: [Data] = []
        try Self.appendUntilPrepared(journal, entries: &entries)
        try Self.copyFiles(of: directory, to: snapshot)
        journal.close()

        #expect(snapshot.segments() == [SegmentDirectory.fileName(for: 1), SegmentDirectory.fileName(for: 2)])
        // Its size from stat: Data(contentsOf:) of an empty file leaks its 4 KiB read buffer in
        // this Foundation (LeakSanitizer's report under scripts/validate-sanitizers.sh).
        #expect(
            try snapshot.size(of: SegmentDirectory.fileName(for: 2))
                == (header.map { Framing.headerSize + $0.count } ?? 0))
        let recovery = try Journal.recover(directory: snapshot.url)
        #expect(recovery.entries == entries)
        #expect(recovery.headers == (header.map { [$0, $0] } ?? []))
        #expect(!recovery.tornTail && !recovery.gapDetected && !recovery.droppedOlderEntries)
        #expect(recovery.segmentCount == 2)
    }

    /// The next journal in a directory with a leftover prepared segment numbers after it and
    /// keeps it as an older segment: nothing is appended behind it or into it.
    @Test func numberingContinuesAfterALeftoverPreparedSegment() throws {
        let directory = try TemporaryDirectory()
        let snapshot = try TemporaryDirectory("snapshot")
        defer {
            directory.remove()
            snapshot.remove()
        }
        let first = try Journal(directory: directory.url, configuration: Self.configuration(header: Self.header))
        var entries: [Data] = []
        try Self.appendUntilPrepared(first, entries: &entries)
        try Self.copyFiles(of: directory, to: snapshot)
        first.close()

        let reopened = try Journal(directory: snapshot.url, configuration: Self.configuration(header: Self.header))
        #expect(reopened.statistics.currentSegment == 3)
        for index in 100..<105 {
            let entry = makeEntry(index, size: 100)
            try reopened.append(entry)
            entries.append(entry)
        }
        reopened.close()
        #expect(snapshot.segments() == (1...3).map { SegmentDirectory.fileName(for: $0) })
        // The leftover still holds only its header.
        let leftover = try snapshot.contents(of: SegmentDirectory.fileName(for: 2))
        #expect(leftover.count == Framing.headerSize + Self.header.count)
        let recovery = try Journal.recover(directory: snapshot.url)
        #expect(recovery.entries == entries)
        #expect(recovery.headers == [Self.header, Self.header, Self.header])
        #expect(!recovery.tornTail && !recovery.gapDetected)
    }

    /// Rotation into a prepared segment writes no second header: the segment holds one header
    /// frame, then the entries, for both durabilities.
    @Test(arguments: [Journal.Durability.processDeath, .fsync])
    func rotationIntoAPreparedSegmentKeepsOneHeader(durability: Journal.Durability) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(
            directory: directory.url, configuration: Self.configuration(header: Self.header, durability: durability))
        var entries: [Data] = []
        try Self.appendUntilPrepared(journal, entries: &entries)
        for index in 10..<30 {
            let entry = makeEntry(index, size: 100)
            try journal.append(entry)
            entries.append(entry)
        }
        #expect(journal.statistics.currentSegment == 2)
        journal.close()
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries == entries)
        #expect(recovery.headers == [Self.header, Self.header])
        #expect(!recovery.tornTail && recovery.segmentCount == 2)
    }

    #if DEBUG
        /// The preparer's header write fails: it deletes its file, rotation creates the segment
        /// itself and writes the header, and nothing appended is lost.
        @Test func aFailedPreparedHeaderWriteFallsBackAndLosesNothing() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: Self.configuration(header: Self.header))
            faults.fail(.preparedHeader, errno: EIO)
            var entries: [Data] = []
            for index in 0..<10 {
                let entry = makeEntry(index, size: 100)
                try journal.append(entry)
                entries.append(entry)
            }
            // The preparer met the fault (and gave up) before the rotating append.
            #expect(pollUntil(seconds: 10) { faults.pendingCount == 0 }, "the preparer never wrote a header")
            #expect(journal.preparer.readyNumber == nil)
            for index in 10..<30 {
                let entry = makeEntry(index, size: 100)
                try journal.append(entry)
                entries.append(entry)
            }
            let statistics = journal.statistics
            #expect(statistics.currentSegment == 2 && statistics.segmentsCreated == 2)
            #expect(statistics.poisonedSegments == 0)
            journal.close()
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == entries)
            #expect(recovery.headers == [Self.header, Self.header])
            #expect(!recovery.tornTail && recovery.segmentCount == 2)
        }

        /// The preparer's segment creation fails: rotation falls back the same way.
        @Test func aFailedPreparedCreationFallsBack() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: Self.configuration(header: Self.header))
            var entries: [Data] = []
            for index in 0..<9 {
                let entry = makeEntry(index, size: 100)
                try journal.append(entry)
                entries.append(entry)
            }
            // The 10th append asks for segment 2; only the preparer opens a file until the 19th.
            faults.fail(.open, errno: EMFILE)
            for index in 9..<10 {
                let entry = makeEntry(index, size: 100)
                try journal.append(entry)
                entries.append(entry)
            }
            #expect(pollUntil(seconds: 10) { faults.pendingCount == 0 }, "the preparer never tried to create")
            for index in 10..<30 {
                let entry = makeEntry(index, size: 100)
                try journal.append(entry)
                entries.append(entry)
            }
            #expect(journal.statistics.currentSegment == 2)
            journal.close()
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == entries)
            #expect(recovery.headers == [Self.header, Self.header])
            #expect(!recovery.tornTail && recovery.segmentCount == 2)
        }
    #endif
}
