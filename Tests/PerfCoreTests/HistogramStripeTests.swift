// Per-thread stripes of the registry: exact counts when more threads are alive than there are
// exclusive stripes, exclusive ownership, and a hot path that allocates nothing on any thread.
import CPerfAllocCounter
import CPerfShims
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

/// Holds threads until `parties` of them have arrived, so that they are all alive at once.
final class ThreadBarrier: @unchecked Sendable {
    // @unchecked: `arrived` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0

    init(parties: Int) { self.parties = parties }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        if arrived == parties { condition.broadcast() }
        while arrived < parties { condition.wait() }
    }
}

@Suite struct HistogramStripeTests {
    @Test func moreThreadsThanStripesRecordExactly() {
        let seed = SeededRandom.makeSeed()
        let threads = 3 * AtomicHistogramEntry.stripeCount / 2
        let perThread = 60_000
        let registry = HistogramRegistry()
        let barrier = ThreadBarrier(parties: threads)
        let stripes = Mutex<[Int: Int]>([:])
        HistogramRegistryTests.onThreads(threads) { thread in
            let values = HistogramRegistryTests.values(seed: seed, thread: thread, count: perThread)
            registry.record("stripes.crowded", nanos: values[0])
            stripes.withLock { $0[thread] = Int(perf_thread_stripe()) }
            // Every thread now holds its stripe, so the later ones must share.
            barrier.arriveAndWait()
            for value in values.dropFirst() { registry.record("stripes.crowded", nanos: value) }
        }
        var expected = LatencyHistogram()
        for thread in 0..<threads {
            for value in HistogramRegistryTests.values(seed: seed, thread: thread, count: perThread) {
                expected.record(nanos: value)
            }
        }
        let snapshot = registry.snapshot()
        #expect(snapshot["stripes.crowded"] == expected, "seed \(seed)")
        #expect(snapshot["stripes.crowded"]?.count == UInt64(threads * perThread), "seed \(seed)")

        let held = stripes.withLock { $0 }
        let exclusive = held.values.filter { $0 < AtomicHistogramEntry.exclusiveStripeCount }
        #expect(held.count == threads)
        #expect(held.values.allSatisfy { (0..<AtomicHistogramEntry.stripeCount).contains($0) })
        #expect(Set(exclusive).count == exclusive.count, "two living threads owned one exclusive stripe")
        #expect(exclusive.count <= AtomicHistogramEntry.exclusiveStripeCount)
        #expect(held.count - exclusive.count >= threads - AtomicHistogramEntry.exclusiveStripeCount)
    }

    @Test func exactWhileASnapshotReadsTheOwnedStripes() {
        let seed = SeededRandom.makeSeed()
        let registry = HistogramRegistry()
        let writers = DispatchGroup()
        for thread in 0..<2 {
            writers.enter()
            Thread {
                for value in HistogramRegistryTests.values(seed: seed, thread: thread, count: 100_000) {
                    registry.record("stripes.read.live", nanos: value)
                }
                writers.leave()
            }.start()
        }
        var previous = LatencyHistogram()
        while writers.wait(timeout: .now()) == .timedOut {
            guard let histogram = registry.snapshot()["stripes.read.live"] else { continue }
            // Each stripe's counters only grow, so neither may the merged buckets.
            #expect(histogram.count >= previous.count, "seed \(seed)")
            #expect(histogram.maxNanos >= previous.maxNanos, "seed \(seed)")
            previous = histogram
        }
        var expected = LatencyHistogram()
        for thread in 0..<2 {
            for value in HistogramRegistryTests.values(seed: seed, thread: thread, count: 100_000) {
                expected.record(nanos: value)
            }
        }
        #expect(registry.snapshot()["stripes.read.live"] == expected, "seed \(seed)")
    }

    @Test(.countsAllocations) func hotPathAllocatesNothingOnASecondThreadAfterWarmUp() {
        let registry = HistogramRegistry(capacity: 16)
        registry.record("stripes.alloc", nanos: 1_000)  // this thread's stripe
        let hotAllocations = Mutex<UInt64?>(nil)
        HistogramRegistryTests.onThreads(1) { _ in
            registry.record("stripes.alloc", nanos: 2_000)  // the second thread's own stripe
            let before = perf_thread_alloc_count()
            for index in 0..<10_000 { registry.record("stripes.alloc", nanos: 1_000 &+ UInt64(index) &* 977) }
            let made = perf_thread_alloc_count() - before
            hotAllocations.withLock { $0 = made }
        }
        #expect(hotAllocations.withLock { $0 } == 0)
        #expect(registry.snapshot()["stripes.alloc"]?.count == 10_002)
    }
}
