// HistogramRegistry: exact counts under concurrency, name merging, overflow and a hot path that
// allocates nothing.
import CPerfAllocCounter
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct HistogramRegistryTests {
    /// Runs `body(thread)` on `threads` OS threads at once and waits for all of them.
    static func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }

    /// The values thread `thread` records in the concurrency tests, derived from the test's seed.
    static func values(seed: UInt64, thread: Int, count: Int) -> [UInt64] {
        var random = SeededRandom(seed: seed &+ UInt64(thread) &* 0x1000_0001)
        return (0..<count).map { _ in 200 + random.next() % 5_000_000_000 }
    }

    @Test func concurrentRecordsFromEightThreadsAreExact() {
        let seed = SeededRandom.makeSeed()
        let registry = HistogramRegistry()
        let perThread = 40_000
        Self.onThreads(8) { thread in
            for (offset, value) in Self.values(seed: seed, thread: thread, count: perThread).enumerated() {
                switch offset % 3 {
                case 0: registry.record("registry.concurrent.a", nanos: value)
                case 1: registry.record("registry.concurrent.b", nanos: value)
                default: registry.record("registry.concurrent.a", nanos: value / 7)
                }
            }
        }
        var expectedA = LatencyHistogram()
        var expectedB = LatencyHistogram()
        for thread in 0..<8 {
            for (offset, value) in Self.values(seed: seed, thread: thread, count: perThread).enumerated() {
                switch offset % 3 {
                case 0: expectedA.record(nanos: value)
                case 1: expectedB.record(nanos: value)
                default: expectedA.record(nanos: value / 7)
                }
            }
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.count == 2)
        #expect(snapshot["registry.concurrent.a"] == expectedA, "seed \(seed)")
        #expect(snapshot["registry.concurrent.b"] == expectedB, "seed \(seed)")
        #expect(
            (snapshot["registry.concurrent.a"]?.count ?? 0) + (snapshot["registry.concurrent.b"]?.count ?? 0) == 8
                * 40_000)
        #expect(registry.droppedRecordCount == 0)
    }

    @Test func snapshotsTakenWhileRecordingAreSelfConsistent() {
        let seed = SeededRandom.makeSeed()
        let registry = HistogramRegistry()
        let writers = DispatchGroup()
        for thread in 0..<2 {
            writers.enter()
            Thread {
                for value in Self.values(seed: seed, thread: thread, count: 200_000) {
                    registry.record("registry.live", nanos: value)
                }
                writers.leave()
            }.start()
        }
        var previousCount: UInt64 = 0
        var snapshots = 0
        var writing = true
        while writing || snapshots == 0 {
            writing = writers.wait(timeout: .now()) == .timedOut
            guard let histogram = registry.snapshot()["registry.live"] else { continue }
            snapshots += 1
            // The JSON parser checks every invariant: count = Σ buckets, min/max in the outer
            // buckets, sum between count × min and count × max.
            #expect((try? LatencyHistogram(json: histogram.jsonString)) == histogram, "seed \(seed)")
            #expect(histogram.count >= previousCount, "seed \(seed)")
            previousCount = histogram.count
        }
        #expect(registry.snapshot()["registry.live"]?.count == 400_000)
    }

    @Test func equalTextStaticStringsAndRuntimeNamesMergeInTheSnapshot() throws {
        let registry = HistogramRegistry()
        let text = "registry.same.text"
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: text.utf8.count + 1)
        defer { storage.deallocate() }
        _ = storage.initialize(from: text.utf8 + [0])
        // A second literal of the same text at another address, as another module would have it.
        // StaticString is (start, byte count, flags: 0x2 = ASCII, pointer representation).
        try #require(MemoryLayout<StaticString>.size == MemoryLayout<(UInt, UInt, UInt8)>.size)
        let relocated = unsafeBitCast(
            (UInt(bitPattern: storage.baseAddress), UInt(text.utf8.count), UInt8(0x2)), to: StaticString.self)
        let literal: StaticString = "registry.same.text"
        try #require(relocated.hasPointerRepresentation && relocated.description == literal.description)
        try #require(relocated.utf8Start != literal.utf8Start)

        registry.record(literal, nanos: 1_000)
        registry.record(relocated, nanos: 2_000)
        registry.record(relocated, nanos: 3_000)
        registry.record(name: text, nanos: 4_000)
        registry.record("x", nanos: 5_000)  // a single-scalar literal may have no address at all
        let snapshot = registry.snapshot()
        #expect(snapshot.keys.sorted() == ["registry.same.text", "x"])
        let merged = try #require(snapshot[text])
        #expect(merged.count == 4 && merged.sumNanos == 10_000 && merged.minNanos == 1_000 && merged.maxNanos == 4_000)
        #expect(snapshot["x"]?.count == 1)
    }

    @Test func namesPastTheCapacityAreCountedNotStored() {
        let registry = HistogramRegistry(capacity: 3)
        #expect(registry.capacity == 4)
        let names: [StaticString] = ["full.a", "full.b", "full.c", "full.d", "full.e", "full.f"]
        for name in names { registry.record(name, nanos: 10_000) }
        for name in names { registry.record(name, nanos: 20_000) }
        let snapshot = registry.snapshot()
        #expect(snapshot.count == 4)
        #expect(snapshot.values.allSatisfy { $0.count == 2 })
        #expect(registry.droppedRecordCount == 4)
        #expect(HistogramRegistry(capacity: 0).capacity == 1)
        #expect(HistogramRegistry(capacity: .max).capacity == 1 << 20)
    }

    /// Every table size from 1 slot up: names found in their home slot and names that probe past
    /// a collision (a table of 1 or 2 slots has little else) all count exactly, and the rest drop.
    @Test(arguments: [1, 2, 4, 8])
    func everyTableSizeFindsEveryNameItHolds(capacity: Int) {
        let registry = HistogramRegistry(capacity: capacity)
        #expect(registry.capacity == capacity)
        let names: [StaticString] = [
            "size.a", "size.b", "size.c", "size.d", "size.e", "size.f", "size.g", "size.h", "size.i",
        ]
        for round in 1...3 {
            for name in names { registry.record(name, nanos: UInt64(round) * 5_000) }
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.count == min(capacity, names.count))
        #expect(snapshot.values.allSatisfy { $0.count == 3 && $0.sumNanos == 30_000 })
        #expect(registry.droppedRecordCount == UInt64(3 * max(0, names.count - capacity)))
    }

    /// The span path's fast case records only what it can without a call, and says so: 0 and
    /// nothing recorded for a name never seen, on a thread that has no stripe of it, or for a
    /// bucket whose chunk does not exist yet; the name's reference once all of those are there.
    /// The fast case is an exclusive stripe's, so the records run on a thread that owns one.
    @Test func recordIfSeenRecordsOnlyWhatItCanAndSaysSo() throws {
        let registry = HistogramRegistry(capacity: 16)
        let owner = try ExclusiveStripeThread.start()
        #expect(owner.run { registry.recordIfSeen("seen.a", nanos: 5_000) } == 0)
        #expect(registry.snapshot()["seen.a"] == nil)
        let ref = owner.run { registry.record("seen.a", nanos: 5_000) }
        #expect(ref != 0)
        #expect(owner.run { registry.recordIfSeen("seen.a", nanos: 5_100) } == ref, "same chunk: the fast case")
        #expect(
            owner.run { registry.recordIfSeen("seen.a", nanos: 9_000_000_000) } == 0,
            "a bucket in a chunk not claimed yet")
        let otherThread = Mutex<UInt32>(1)
        HistogramRegistryTests.onThreads(1) { _ in
            otherThread.withLock { $0 = registry.recordIfSeen("seen.a", nanos: 5_000) }
        }
        #expect(otherThread.withLock { $0 } == 0, "a thread without its stripe of the name")
        #expect(registry.snapshot()["seen.a"]?.count == 2)
        #expect(registry.snapshot()["seen.a"]?.sumNanos == 10_100)
    }

    @Test(.countsAllocations) func hotPathAllocatesNothing() {
        let registry = HistogramRegistry(capacity: 16)
        registry.record("alloc.hot", nanos: 1_000)  // first sighting allocates the name's counters
        let before = perf_thread_alloc_count()
        for index in 0..<10_000 { registry.record("alloc.hot", nanos: 1_000 &+ UInt64(index) &* 977) }
        #expect(perf_thread_alloc_count() - before == 0)
        // The counter sees the first record of a fresh histogram allocate its storage.
        let control = perf_thread_alloc_count()
        var fresh = LatencyHistogram()
        fresh.record(nanos: 1_000)
        #expect(perf_thread_alloc_count() - control >= 1)
        #expect(fresh.count == 1)
    }
}
