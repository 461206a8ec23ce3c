// The exclusive stripe's late bucket tick: a record's bucket waits in the stripe's pending word
// until the stripe's next record adds it, and every reader counts the pending word, so that no
// record is lost or counted twice: on the stripe's own thread, after the stripe passes to another
// thread, and in a crashed process's file.
import CPerfShims
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct HistogramLateTickTests {
    typealias L = SpanMemoryLayout

    /// The stripe `owner` records into, of the memory's first entry.
    private static func stripe(of memory: SpanMemory, ownedBy owner: ExclusiveStripeThread) throws
        -> UnsafeMutableRawPointer
    {
        let ref = memory.entry(0).load(fromByteOffset: L.entryStripesOffset + 4 * Int(owner.stripe), as: UInt32.self)
        try #require(ref != 0)
        return memory.arena + Int(ref) * L.refUnit
    }

    /// The counts in the stripe's chunks, without the pending word.
    private static func chunkCounts(_ stripe: UnsafeMutableRawPointer, memory: SpanMemory) -> [Int: UInt64] {
        var counts: [Int: UInt64] = [:]
        for group in 0..<L.chunkGroups {
            let ref = stripe.load(fromByteOffset: L.stripeChunkRefsOffset + 4 * group, as: UInt32.self)
            guard ref != 0 else { continue }
            let chunk = memory.arena + Int(ref) * L.refUnit
            for slot in 0..<L.bucketsPerChunk {
                let count = chunk.load(fromByteOffset: 8 * slot, as: UInt64.self)
                if count != 0 { counts[group * L.bucketsPerChunk + slot] = count }
            }
        }
        return counts
    }

    private static func parse(_ memory: SpanMemory) throws -> RecoveredSpanMemory {
        let image = memory.image
        return try RecoveredSpanMemory.parse(UnsafeRawBufferPointer(start: image.base, count: image.count))
    }

    @Test func theLastRecordWaitsInThePendingWordAndStillCounts() throws {
        let memory = try SpanMemory.anonymous(.init(bytes: 1 << 20, nameCapacity: 4, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        let first: UInt64 = 3_000
        let second: UInt64 = 7_000_000
        let firstIndex = HistogramLayout.index(ofNanos: first)
        let secondIndex = HistogramLayout.index(ofNanos: second)
        let owner = try ExclusiveStripeThread.start()
        owner.run { registry.record("late.tick", nanos: first) }
        let stripe = try Self.stripe(of: memory, ownedBy: owner)
        let pending = stripe.load(fromByteOffset: L.stripePendingOffset, as: UInt64.self)

        // The first record is all in the pending word: its chunk is claimed but holds nothing yet.
        #expect(Self.chunkCounts(stripe, memory: memory).isEmpty)
        #expect(pending & 0xFFFF_FFFF == UInt64(firstIndex + 1))
        let chunkRef = stripe.load(
            fromByteOffset: L.stripeChunkRefsOffset + 4 * (firstIndex / L.bucketsPerChunk), as: UInt32.self)
        #expect(pending >> 32 == UInt64(chunkRef), "the pending word names the chunk its tick goes to")
        var expected = LatencyHistogram()
        expected.record(nanos: first)
        #expect(registry.snapshot()["late.tick"] == expected)
        #expect(try Self.parse(memory).histograms["late.tick"] == expected)

        // The second record adds the first to its chunk and waits in turn.
        owner.run { registry.record("late.tick", nanos: second) }
        expected.record(nanos: second)
        #expect(Self.chunkCounts(stripe, memory: memory) == [firstIndex: 1])
        #expect(
            stripe.load(fromByteOffset: L.stripePendingOffset, as: UInt64.self) & 0xFFFF_FFFF == UInt64(secondIndex + 1)
        )
        #expect(registry.snapshot()["late.tick"] == expected)
        let read = try Self.parse(memory)
        #expect(read.histograms["late.tick"] == expected)
        #expect(read.damaged == 0 && read.tornRecords == 0)
    }

    @Test func seededRecordsReadBackExactlyLiveAndFromTheFile() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let memory = try SpanMemory.anonymous(.init(bytes: 4 << 20, nameCapacity: 8, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        let owner = try ExclusiveStripeThread.start()
        var expected = LatencyHistogram()
        for round in 0..<200 {
            let value = 1 + random.next() % 10_000_000_000
            owner.run { registry.record("late.seeded", nanos: value) }
            expected.record(nanos: value)
            // Every few records, both readers must agree with the records made so far.
            if round % 37 == 0 {
                #expect(registry.snapshot()["late.seeded"] == expected, "seed \(seed), round \(round)")
                #expect(try Self.parse(memory).histograms["late.seeded"] == expected, "seed \(seed), round \(round)")
            }
        }
        #expect(registry.snapshot()["late.seeded"] == expected, "seed \(seed)")
        #expect(try Self.parse(memory).histograms["late.seeded"] == expected, "seed \(seed)")
    }

    /// Threads that each record one value and exit, one after another: the exclusive stripe a
    /// thread leaves with a pending tick is taken by a later thread, which adds that tick.
    @Test func aStripeLeftWithAPendingTickIsFinishedByItsNextOwner() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let registry = HistogramRegistry()
        let values = (0..<40).map { _ in 100 + random.next() % 1_000_000_000 }
        let stripes = Mutex<[UInt32]>([])
        for value in values {
            try Self.joined {
                registry.record("late.handover", nanos: value)
                stripes.withLock { $0.append(perf_thread_stripe()) }
            }
        }
        var expected = LatencyHistogram()
        for value in values { expected.record(nanos: value) }
        #expect(registry.snapshot()["late.handover"] == expected, "seed \(seed)")
        let taken = stripes.withLock { $0 }
        let exclusive = taken.filter { $0 < PERF_EXCLUSIVE_STRIPES }
        // 40 threads and 16 exclusive stripes: some stripe served several of them in turn.
        #expect(Set(exclusive).count < exclusive.count, "no exclusive stripe was handed on: \(taken)")
    }

    @Test func aPendingWordOutsideTheBucketsIsABadReferenceNotACount() throws {
        let memory = try SpanMemory.anonymous(.init(bytes: 1 << 20, nameCapacity: 4, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        let owner = try ExclusiveStripeThread.start()
        owner.run { for _ in 0..<5 { registry.record("late.damaged", nanos: 4_000) } }
        let stripe = try Self.stripe(of: memory, ownedBy: owner)
        for word: UInt64 in [UInt64(HistogramLayout.bucketCount + 1), 0xFFFF_FFFF, 7 << 32] {
            stripe.storeBytes(of: word, toByteOffset: L.stripePendingOffset, as: UInt64.self)
            let read = try Self.parse(memory)
            #expect(read.damaged == 1, "pending word \(word)")
            #expect(read.histograms["late.damaged"]?.count == 4, "the ticks already in the chunk stay")
        }
    }

    /// Runs `body` on a new thread and returns once the thread has ended, its thread-local
    /// destructors (which hand its stripe back) included.
    private static func joined(_ body: @escaping @Sendable () -> Void) throws {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw POSIXError(.EAGAIN)
        }
        pthread_join(thread, nil)
    }
}
