// Recovery while a journal's reaper is still unlinking the segments rotation dropped: it keeps
// doing so after the journal is gone. Each interleaving is forced through the syscall seam, so
// it happens on every run, without timing.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import JournalKit

// The seam interleaves work in debug builds only.
#if DEBUG

    @Suite struct RecoveryDuringReapingTests {
        /// A rotated journal as a reaper finds it before its first unlink: every dropped segment
        /// still on disk (its unlinks failed), then the live ones and the unused prepared segment.
        private struct Rotated {
            /// Segment file names and contents, oldest first.
            var segments: [(name: String, contents: Data)]
            /// Every entry appended, in order.
            var entries: [Data]
            /// How many of the oldest segments rotation dropped.
            var dropped: Int
        }

        private static func rotatedJournal() throws -> Rotated {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: .init(byteBudget: 4096, segmentHeader: Data("h".utf8)))
            // Enough for every unlink before the files are copied (one per drop, close's flush and
            // its discard of the prepared segment); the reaper's 1 s retries use up the rest.
            faults.fail(.unlink, errno: EACCES, times: 100)
            let entries = (0..<150).map { makeEntry($0, size: 90) }
            for entry in entries { try journal.append(entry) }
            journal.close()
            let segments = try directory.segments().map { (name: $0, contents: try directory.contents(of: $0)) }
            return Rotated(segments: segments, entries: entries, dropped: journal.statistics.segmentsDropped)
        }

        /// A fresh directory holding `rotated`'s segments with the oldest `unlinked` already gone.
        private static func directory(with rotated: Rotated, unlinked: Int = 0) throws -> TemporaryDirectory {
            let directory = try TemporaryDirectory()
            for (name, contents) in rotated.segments.dropFirst(unlinked) { try directory.write(contents, to: name) }
            return directory
        }

        /// What the reaper does: unlinks the oldest segments, oldest first.
        private static func unlinkOldest(_ count: Int, of rotated: Rotated, in directory: TemporaryDirectory) {
            for (name, _) in rotated.segments.prefix(count) { _ = unlink(directory.path + "/" + name) }
        }

        /// Recovery with `interleaving` planned on its syscalls.
        private static func recover(
            _ directory: TemporaryDirectory, planning interleaving: (FaultInjection) -> Void
        ) throws -> Journal.Recovery {
            let faults = FaultInjection()
            var syscalls = Syscalls.live
            syscalls.faults = faults
            interleaving(faults)
            let recovery = try Journal.recover(directory: directory.url, syscalls: syscalls)
            #expect(faults.pendingCount == 0)
            return recovery
        }

        /// Recovery once the reaper has unlinked the oldest `unlinked` segments.
        private static func settled(_ rotated: Rotated, unlinked: Int) throws -> Journal.Recovery {
            let directory = try Self.directory(with: rotated, unlinked: unlinked)
            defer { directory.remove() }
            return try Journal.recover(directory: directory.url)
        }

        /// What SessionRotationTests met on a fresh clone ("663 entries are missing between the first
        /// and the last kept", no drop): recovery listed the directory and read segment 1; the reaper
        /// then unlinked segments 1 to 3, oldest first, before recovery opened segment 2. Recovery
        /// kept segment 1's entries, read nothing for 2 and 3, and with segment 1 first and no
        /// gap in the listing reported neither a drop nor a gap: a hole in the middle.
        @Test func segmentsUnlinkedAfterTheOldestWasReadAreDroppedWithIt() throws {
            let rotated = try Self.rotatedJournal()
            try #require(rotated.dropped >= 3)
            let directory = try Self.directory(with: rotated)
            defer { directory.remove() }
            let racing = try Self.recover(directory) { faults in
                faults.interleave(before: 2, of: .open) { Self.unlinkOldest(3, of: rotated, in: directory) }
            }
            let settled = try Self.settled(rotated, unlinked: 3)
            #expect(racing.entries == settled.entries)
            #expect(racing.headers == settled.headers)
            #expect(racing.droppedOlderEntries && !racing.gapDetected && !racing.tornTail)
            #expect(racing.segmentCount == rotated.segments.count - 3)
            #expect(racing.entries == Array(rotated.entries.suffix(racing.entries.count)))
        }

        /// The listing itself races the reaper: readdir returned segment 1, met segments 2 and 3 only
        /// after they were unlinked, and segment 1 was gone by the time recovery opened it. The
        /// missing numbers are a drop, not a gap.
        @Test func aListingThatCaughtTheOldestBeforeItsUnlinkShowsNoGap() throws {
            let rotated = try Self.rotatedJournal()
            try #require(rotated.dropped >= 3)
            let directory = try Self.directory(with: rotated)
            defer { directory.remove() }
            for (name, _) in rotated.segments[1..<3] { _ = unlink(directory.path + "/" + name) }
            let racing = try Self.recover(directory) { faults in
                faults.interleave(before: 1, of: .open) { Self.unlinkOldest(1, of: rotated, in: directory) }
            }
            let settled = try Self.settled(rotated, unlinked: 3)
            #expect(racing.entries == settled.entries)
            #expect(racing.droppedOlderEntries && !racing.gapDetected)
        }

        /// Whenever the reaper's unlinks land, recovery returns either what it would have before
        /// they started or what it returns after they finished: never a hole, never a gap.
        @Test func everyPointAtWhichTheReaperCanOvertakeRecoveryGivesASettledAnswer() throws {
            let rotated = try Self.rotatedJournal()
            try #require(rotated.dropped >= 2)
            let untouched = try Self.settled(rotated, unlinked: 0)
            #expect(!untouched.droppedOlderEntries && untouched.entries == rotated.entries)
            for unlinked in 1...rotated.dropped {
                let settled = try Self.settled(rotated, unlinked: unlinked)
                #expect(settled.droppedOlderEntries && !settled.gapDetected)
                for call in 1...rotated.segments.count {
                    let directory = try Self.directory(with: rotated)
                    defer { directory.remove() }
                    let racing = try Self.recover(directory) { faults in
                        faults.interleave(before: call, of: .open) {
                            Self.unlinkOldest(unlinked, of: rotated, in: directory)
                        }
                    }
                    // Segments read before the unlinks began are whole; none of those is unlinked
                    // only when recovery had already read every segment the reaper removes.
                    let expected = call > unlinked ? untouched : settled
                    let interleaving: Comment = "\(unlinked) unlinked before open \(call)"
                    #expect(racing.entries == expected.entries, interleaving)
                    #expect(racing.headers == expected.headers, interleaving)
                    #expect(racing.droppedOlderEntries == expected.droppedOlderEntries, interleaving)
                    #expect(!racing.gapDetected, interleaving)
                }
            }
        }

        /// A segment vanishing after the last one read is no drop (rotation drops the oldest):
        /// `close()` deletes the unused prepared segment, which recovery may have listed.
        @Test func theNewestSegmentVanishingIsNotADrop() throws {
            let rotated = try Self.rotatedJournal()
            let directory = try Self.directory(with: rotated)
            defer { directory.remove() }
            // The prepared segment a crashed process leaves, empty.
            let newest = try #require(rotated.segments.last.flatMap { SegmentDirectory.number(fromFileName: $0.name) })
            let prepared = SegmentDirectory.fileName(for: newest + 1)
            try directory.write(Data(), to: prepared)
            let racing = try Self.recover(directory) { faults in
                faults.interleave(before: rotated.segments.count + 1, of: .open) {
                    _ = unlink(directory.path + "/" + prepared)
                }
            }
            let untouched = try Self.settled(rotated, unlinked: 0)
            #expect(racing.entries == rotated.entries && racing.entries == untouched.entries)
            #expect(!racing.droppedOlderEntries && !racing.gapDetected)
            #expect(racing.segmentCount == rotated.segments.count)
        }
    }

#endif
