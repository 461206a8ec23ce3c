// Many threads appending at once: every entry recovered exactly once, in per-thread order,
// never interleaved with another.
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import JournalKit

@Suite struct ConcurrencyTests {
    @Test func eightThreadsTwoThousandAppendsEach() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.url, configuration: .init(byteBudget: 256 << 20))
        let threads = 8
        let perThread = 2_000
        let failures = DispatchQueue.concurrentPerformFailures(threads) { thread in
            for index in 0..<perThread {
                try journal.append(Self.entry(thread: thread, index: index))
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        journal.close()
        let recovery = try Journal.recover(directory: directory.url)
        #expect(recovery.entries.count == threads * perThread)
        #expect(!recovery.tornTail)
        var next = [Int](repeating: 0, count: threads)
        for entry in recovery.entries {
            let thread = Int(entry[entry.startIndex])
            let index = Int(entry[entry.startIndex + 1]) | Int(entry[entry.startIndex + 2]) << 8
            guard thread < threads, entry == Self.entry(thread: thread, index: index) else {
                Issue.record("an entry was damaged or interleaved")
                return
            }
            #expect(index == next[thread], "thread \(thread) out of order")
            next[thread] = index + 1
        }
        #expect(next == Array(repeating: perThread, count: threads))
    }

    /// Rotation, segment preparation and drops racing with four writers under a tiny budget.
    @Test func concurrentAppendsThroughManyRotations() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let budget = 16 << 10
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: budget, segmentHeader: Data("h".utf8)))
        let threads = 4
        let perThread = 2_000
        let failures = DispatchQueue.concurrentPerformFailures(threads) { thread in
            for index in 0..<perThread { try journal.append(Self.entry(thread: thread, index: index)) }
        }
        #expect(failures.isEmpty, "\(failures)")
        journal.close()
        #expect(directory.footprint() <= budget)
        #expect(journal.statistics.segmentsFreed == journal.statistics.segmentsDropped)
        let recovery = try Journal.recover(directory: directory.url)
        #expect(!recovery.gapDetected && !recovery.tornTail && recovery.droppedOlderEntries)
        #expect(recovery.headers.count == recovery.segmentCount)
        var last = [Int](repeating: -1, count: threads)
        for entry in recovery.entries {
            let thread = Int(entry[entry.startIndex])
            let index = Int(entry[entry.startIndex + 1]) | Int(entry[entry.startIndex + 2]) << 8
            #expect(entry == Self.entry(thread: thread, index: index))
            #expect(index > last[thread], "thread \(thread) out of order")
            last[thread] = index
        }
        // The newest entry of all is some thread's final one (threads may finish far apart, so
        // an early finisher's entries can all be dropped).
        #expect(last.contains(perThread - 1))
    }

    @Test func concurrentFsyncAppendsShareSyncs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(
            directory: directory.url, configuration: .init(byteBudget: 1 << 20, durability: .fsync))
        let failures = DispatchQueue.concurrentPerformFailures(4) { thread in
            for index in 0..<40 { try journal.append(Self.entry(thread: thread, index: index)) }
        }
        #expect(failures.isEmpty, "\(failures)")
        journal.close()
        #expect(try Journal.recover(directory: directory.url).entries.count == 160)
    }

    /// `[thread][index lo][index hi]` then a size and filler that depend on both.
    static func entry(thread: Int, index: Int) -> Data {
        let size = 3 + (thread * 31 + index * 17) % 300
        var data = Data([UInt8(thread), UInt8(index & 0xFF), UInt8(index >> 8)])
        data.append(contentsOf: (3..<size).map { UInt8(truncatingIfNeeded: $0 ^ thread ^ index) })
        return data
    }
}

extension DispatchQueue {
    /// Runs `body` on `count` threads at once and returns the errors they threw.
    static func concurrentPerformFailures(_ count: Int, _ body: @Sendable (Int) throws -> Void) -> [String] {
        let errors = Mutex<[String]>([])
        concurrentPerform(iterations: count) { index in
            do { try body(index) } catch { errors.withLock { $0.append("\(error)") } }
        }
        return errors.withLock { $0 }
    }
}
