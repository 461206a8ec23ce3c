// An ordinary append writes after releasing the append lock: a thread stalled in its write(2)
// holds no other append back, a write that fails after its segment rotated poisons nothing, and
// concurrent writers still leave every entry whole, in each thread's order, within the budget.
import Foundation
import Glibc
import PerfTestSupport
import Synchronization
import Testing

@testable import JournalKit

@Suite struct AppendOutsideLockTests {
    /// Each thread's entries that survive are a run ending at its last append, whole and in
    /// order, whatever order the threads' writes reached the file in (seeded sizes, thread
    /// counts and budgets, so rotations and drops race with writes in flight).
    @Test(arguments: [0x51A7_0001, 0x51A7_0002, 0x51A7_0003, 0x51A7_0004] as [UInt64])
    func concurrentWritersKeepEveryThreadsEntriesWholeAndInOrder(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let threads = Int.random(in: 2...6, using: &random)
        let perThread = Int.random(in: 300...1_500, using: &random)
        let budget = Int.random(in: 8...96, using: &random) << 10
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: budget, segmentHeader: Data("h".utf8)))
        let failures = DispatchQueue.concurrentPerformFailures(threads) { thread in
            for index in 0..<perThread { try journal.append(Self.entry(seed: seed, thread: thread, index: index)) }
        }
        #expect(failures.isEmpty, "\(failures)")
        journal.close()
        let statistics = journal.statistics
        #expect(statistics.appendedEntries == threads * perThread)
        #expect(statistics.poisonedSegments == 0)
        #expect(directory.footprint() <= budget, "budget \(budget)")
        let recovery = try Journal.recover(directory: directory.url)
        #expect(!recovery.tornTail && !recovery.gapDetected)
        var survivors = [[Int]](repeating: [], count: threads)
        for entry in recovery.entries {
            let thread = Int(entry[entry.startIndex])
            let index = Int(entry[entry.startIndex + 1]) | Int(entry[entry.startIndex + 2]) << 8
            guard thread < threads, entry == Self.entry(seed: seed, thread: thread, index: index) else {
                Issue.record("seed \(seed): an entry was damaged or interleaved")
                return
            }
            survivors[thread].append(index)
        }
        for (thread, indices) in survivors.enumerated() where !indices.isEmpty {
            let first = indices[0]
            #expect(indices == Array(first..<perThread), "seed \(seed), thread \(thread): \(indices.prefix(8))…")
        }
        #expect(survivors.contains { $0.last == perThread - 1 })
    }

    /// `[thread][index lo][index hi]`, then a seeded size (3–700 bytes) of filler that depends
    /// on all three.
    static func entry(seed: UInt64, thread: Int, index: Int) -> Data {
        var random = SeededRandom(seed: seed ^ UInt64(thread) << 32 ^ UInt64(index))
        let size = Int.random(in: 3...700, using: &random)
        var data = Data([UInt8(thread), UInt8(index & 0xFF), UInt8(index >> 8)])
        data.append(contentsOf: (3..<size).map { UInt8(truncatingIfNeeded: $0 ^ thread ^ index) })
        return data
    }
}

// The seam forces stalls and faults in debug builds only.
#if DEBUG
    extension AppendOutsideLockTests {
        /// One thread held inside its write(2) (the seam's hook stands in for a stalled disk)
        /// while another appends 50 entries: they all return before the stalled one does. When the
        /// lock was held across the write, the second thread waited for the first.
        @Test func anAppendStalledInItsWriteHoldsNoOtherAppendBack() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(at: directory)
            let inWrite = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            faults.interleave(before: 1, of: .write) {
                inWrite.signal()
                release.wait()
            }
            let stalledError = Mutex<String?>(nil)
            let stalledDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                do { try journal.append(makeEntry(0)) } catch { stalledError.withLock { $0 = "\(error)" } }
                stalledDone.signal()
            }
            inWrite.wait()
            let othersError = Mutex<String?>(nil)
            let othersDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                do { for index in 1...50 { try journal.append(makeEntry(index)) } } catch {
                    othersError.withLock { $0 = "\(error)" }
                }
                othersDone.signal()
            }
            // A bound on a failure, not a synchronisation: the appends finish in microseconds.
            let finishedWhileStalled = othersDone.wait(timeout: .now() + 60) == .success
            #expect(finishedWhileStalled, "the other thread's appends waited for the stalled write")
            #expect(stalledDone.wait(timeout: .now()) == .timedOut, "the stalled append returned early")
            release.signal()
            stalledDone.wait()
            if !finishedWhileStalled { othersDone.wait() }
            #expect(stalledError.withLock { $0 } == nil)
            #expect(othersError.withLock { $0 } == nil)
            journal.close()
            let recovery = try Journal.recover(directory: directory.url)
            // The stalled entry reached the file last.
            #expect(recovery.entries == (1...50).map { makeEntry($0) } + [makeEntry(0)])
            #expect(!recovery.tornTail)
        }

        /// A write that fails after other appends rotated its segment away costs its own entry
        /// only: the segment now current is not poisoned, so the next append does not rotate.
        @Test func aWriteThatFailsAfterItsSegmentRotatedPoisonsNothing() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (journal, faults) = try journalWithFaults(at: directory, configuration: .init(byteBudget: 64 << 10))
            try journal.append(makeEntry(1))
            let fillers = Mutex<[Data]>([])
            faults.interleave(before: 1, of: .write) {
                // Runs in the failing append, after it reserved room and released the lock: another
                // thread's appends fill that segment until one rotates, then the reserved write fails.
                let filled = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    let segments = journal.statistics.segmentsCreated
                    var index = 100
                    while journal.statistics.segmentsCreated == segments {
                        let entry = makeEntry(index, size: 1_000)
                        do { try journal.append(entry) } catch {
                            Issue.record("filler append failed: \(error)")
                            break
                        }
                        fillers.withLock { $0.append(entry) }
                        index += 1
                    }
                    filled.signal()
                }
                // A bound on a failure (the lock held across this write), not a synchronisation.
                #expect(filled.wait(timeout: .now() + 60) == .success, "the fillers waited for the reserved write")
                faults.fail(.write, errno: EIO)
            }
            do {
                try journal.append(makeEntry(2))
                Issue.record("the failed write was not reported")
            } catch let error as JournalError {
                #expect(error.errno == EIO)
            }
            let before = journal.statistics
            #expect(before.poisonedSegments == 0)
            try journal.append(makeEntry(3))
            let after = journal.statistics
            #expect(after.segmentsCreated == before.segmentsCreated, "the append after the failure rotated")
            let written = fillers.withLock { $0 }
            #expect(after.appendedEntries == 1 + written.count + 1)
            journal.close()
            let recovery = try Journal.recover(directory: directory.url)
            #expect(recovery.entries == [makeEntry(1)] + written + [makeEntry(3)])
            #expect(!recovery.tornTail)
        }
    }
#endif
