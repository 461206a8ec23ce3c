// Failures forced through the syscall seam: short writes, a full disk, EINTR, failed unlinks.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import JournalKit

// The seam forces faults in debug builds only.
#if DEBUG

    @Suite struct FaultInjectionTests {
        /// One interrupted entry costs one entry, not the rest of the session.
        @Test func shortWritePoisonsTheSegmentAndTheNextAppendStartsAFreshOne() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: .init(byteBudget: 1 << 20, segmentHeader: Data("h".utf8)))
            try journal.append(makeEntry(1))
            faults.shortWrite(keeping: 11)
            do {
                try journal.append(makeEntry(2, size: 64))
                Issue.record("a short write was not reported")
            } catch let error as JournalError {
                #expect(error.code == .shortWrite)
                #expect(error.message.contains("next append starts a fresh segment"))
            }
            try journal.append(makeEntry(3))
            try journal.append(makeEntry(4))
            #expect(journal.statistics.poisonedSegments == 1)
            #expect(journal.statistics.segmentsCreated == 2)
            journal.close()
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == [makeEntry(1), makeEntry(3), makeEntry(4)])
            #expect(recovery.headers.count == 2)
            #expect(recovery.tornTail && recovery.tornSegmentCount == 1 && recovery.bytesDiscarded == 11)
        }

        @Test func diskFullIsTypedAndRecoverable() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(at: directory)
            try journal.append(makeEntry(1))
            faults.fail(.write, errno: ENOSPC)
            do {
                try journal.append(makeEntry(2))
                Issue.record("ENOSPC was not reported")
            } catch let error as JournalError {
                #expect(error.code == .noSpace)
                #expect(error.errno == ENOSPC)
                #expect(error.path?.hasSuffix(".journal") == true)
                #expect(error.description.contains("free disk space"))
            }
            try journal.append(makeEntry(3))
            #expect(journal.statistics.poisonedSegments == 1)
            #expect(try Journal.recover(directory: directory.url).entries == [makeEntry(1), makeEntry(3)])
        }

        @Test func segmentCreationFailureIsTyped() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = FaultInjection()
            var syscalls = Syscalls.live
            syscalls.faults = faults
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            faults.fail(.open, errno: ENOSPC)
            do {
                _ = try Journal(directory: directory.url, configuration: .init(), syscalls: syscalls)
                Issue.record("a failed segment creation was not reported")
            } catch {
                #expect(error.code == .noSpace && error.errno == ENOSPC)
                #expect(error.path?.hasSuffix(".journal") == true)
            }
        }

        @Test func interruptedSyscallsAreRetried() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: .init(byteBudget: 1 << 20, durability: .fsync))
            faults.fail(.write, errno: EINTR, times: 3)
            faults.fail(.sync, errno: EINTR, times: 2)
            try journal.append(makeEntry(1))
            #expect(faults.pendingCount == 0)
            #expect(journal.statistics.poisonedSegments == 0)
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == [makeEntry(1)] && !recovery.tornTail)
        }

        @Test func failedSyncIsReportedWithoutLosingTheEntry() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(
                at: directory, configuration: .init(byteBudget: 1 << 20, durability: .fsync))
            try journal.append(makeEntry(1))
            faults.fail(.sync, errno: EIO)
            do {
                try journal.append(makeEntry(2))
                Issue.record("a failed fdatasync was not reported")
            } catch let error as JournalError {
                #expect(error.code == .syncFailed && error.errno == EIO)
            }
            #expect(try Journal.recover(directory: directory.url).entries == [makeEntry(1), makeEntry(2)])
        }

        /// A failed unlink is not counted as freed, is retried, and the footprint returns to the budget.
        @Test func failedUnlinksAreRetriedAndCountedHonestly() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let budget = 4096
            let (journal, faults) = try journalWithFaults(at: directory, configuration: .init(byteBudget: budget))
            faults.fail(.unlink, errno: EIO, times: 3)
            var maxLiveFootprint = 0
            for index in 0..<300 {
                try journal.append(makeEntry(index, size: 90))
                // Statistics first: deletions only shrink the footprint read after them.
                let pending = journal.statistics.pendingUnlinkBytes
                maxLiveFootprint = max(maxLiveFootprint, directory.footprint() - pending)
            }
            // Each close() retries the pending deletions once more (in order, stopping at a failure),
            // so a few calls use up the three injected failures without waiting for the timed retry.
            for _ in 0..<5 where journal.statistics.pendingUnlinks > 0 { journal.close() }
            let statistics = journal.statistics
            // The reaper met most of the failures; close() deleting the unused prepared segment
            // may have met one of them.
            #expect(faults.pendingCount == 0)
            #expect((2...3).contains(statistics.failedUnlinkAttempts))
            #expect(statistics.segmentsFreed == statistics.segmentsDropped)
            #expect(statistics.pendingUnlinks == 0)
            #expect(directory.footprint() <= budget)
            // While unlinks failed, everything beyond the budget was a dropped segment awaiting its retry.
            #expect(maxLiveFootprint <= budget)
        }

        @Test func permanentlyFailingUnlinksAreNeverCountedAsFreed() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(at: directory, configuration: .init(byteBudget: 4096))
            faults.fail(.unlink, errno: EACCES, times: 1_000_000)
            for index in 0..<100 { try journal.append(makeEntry(index, size: 90)) }
            journal.close()
            let statistics = journal.statistics
            #expect(statistics.segmentsDropped > 0)
            #expect(statistics.segmentsFreed == 0)
            #expect(statistics.pendingUnlinks == statistics.segmentsDropped)
            #expect(statistics.pendingUnlinkBytes > 0)
            #expect(statistics.failedUnlinkAttempts >= 1)
            let recovery = try Journal.recover(directory: directory.url)
            // Nothing was deleted, so nothing is missing: the oldest segment is still number 1.
            #expect(!recovery.droppedOlderEntries && recovery.entries.first == makeEntry(0, size: 90))
        }
    }
#endif
