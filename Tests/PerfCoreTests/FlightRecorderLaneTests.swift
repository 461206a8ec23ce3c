// The flight recorder's lanes: a ring of 1,024 or more has four lanes of its capacity, so that
// two threads ending spans at once write different cache lines; each lane keeps its newest
// spans, a snapshot merges the lanes by end time and keeps the newest `capacity`, and a crashed
// process's ring reads back the same way with every lane counted.
import CPerfShims
import Dispatch
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct FlightRecorderLaneTests {
    @Test func ringsOf1024OrMoreHaveFourLanesOfTheirCapacity() {
        let expected: [UInt64: UInt64] = [1: 1, 64: 1, 512: 1, 1023: 1, 1024: 4, 4096: 4, 1 << 20: 4]
        for (capacity, lanes) in expected {
            #expect(perf_flight_lane_count(capacity) == lanes, "capacity \(capacity)")
            #expect(perf_flight_slot_count(capacity) == capacity * lanes, "capacity \(capacity)")
        }
        let ring = perf_flight_ring_create(4096)!
        defer { perf_flight_ring_destroy(ring) }
        #expect(ring.pointee.lane_mask == 3 && ring.pointee.mask == 4095 && ring.pointee.lane_shift == 12)
        #expect(ring.pointee.block == 64)
        let small = perf_flight_ring_create(512)!
        defer { perf_flight_ring_destroy(small) }
        #expect(small.pointee.lane_mask == 0 && small.pointee.mask == 511)
    }

    /// Every thread writes only the lane of its stripe index, whatever index it got.
    @Test func eachThreadWritesOnlyItsStripesLane() {
        let flight = FlightRecorder(capacity: 1024)!
        let threads = 4
        let stripes = Mutex<[Int32: UInt32]>([:])
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            for index in 0..<200 as Range<UInt64> {
                flight.record(
                    "lane.writer", startNanos: UInt64(worker) << 32 | index, durationNanos: 1, budgetNanos: nil,
                    exit: .success)
            }
            let stripe = perf_thread_stripe()
            let tid = perf_thread_tid()
            stripes.withLock { $0[tid] = stripe }
        }
        let byThread = stripes.withLock { $0 }
        var seen = 0
        for index in 0..<4 * flight.capacity {
            let slot = flight.ring.pointee.slots[index]
            guard slot.seq != 0 else { continue }
            seen += 1
            let stripe = byThread[slot.tid]
            #expect(stripe != nil, "slot \(index) written by a thread outside the test")
            if let stripe { #expect(index >> 10 == Int(stripe & 3), "slot \(index), stripe \(stripe)") }
        }
        // 800 spans fit one lane of 1,024, however the workers shared threads.
        #expect(flight.snapshot().entries.count == 200 * threads)
        #expect(seen == 200 * threads)
        #expect(flight.snapshot().recorded >= UInt64(200 * threads))
    }

    /// One busy thread keeps its newest `capacity` spans in its lane, as a one-lane ring would,
    /// and the ticket count is exact to the block.
    @Test func oneThreadKeepsItsNewestCapacityOfSpansAndEveryTicketIsCounted() {
        let flight = FlightRecorder(capacity: 4096)!
        for index in 0..<5_000 as Range<UInt64> {
            flight.record("lane.busy", startNanos: 10 * index, durationNanos: 5, budgetNanos: nil, exit: .success)
        }
        let snapshot = flight.snapshot()
        #expect(snapshot.entries.map(\.startMonotonicNanos) == (904..<5_000).map { 10 * $0 })
        // 5,000 tickets in blocks of 64: 79 blocks.
        #expect(snapshot.recorded == 79 * 64)
    }

    /// Several threads fill several lanes beyond the capacity: the snapshot holds exactly the
    /// `capacity` spans that end last of all those the lanes still hold, by end time.
    @Test func severalLanesGiveBackTheNewestCapacityOfAllThreads() {
        let flight = FlightRecorder(capacity: 1024)!
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<1_500 as Range<UInt64> {
                flight.record(
                    "lane.many", startNanos: 4 * index + UInt64(worker), durationNanos: 1, budgetNanos: nil,
                    exit: .success)
            }
        }
        let entries = flight.snapshot().entries
        #expect(entries.count == 1_024)
        let ends = entries.map { $0.startMonotonicNanos + $0.durationNanos }
        #expect(ends == ends.sorted())
        var held: [UInt64] = []
        for index in 0..<4 * flight.capacity {
            let slot = flight.ring.pointee.slots[index]
            if slot.seq != 0 { held.append(slot.start_ns + slot.duration_ns) }
        }
        #expect(held.count >= 1_024, "every lane written holds up to 1,024; 6,000 spans fill one at least")
        #expect(ends == Array(held.sorted().suffix(1_024)))
    }

    /// Lanes fill at their own pace; the snapshot interleaves them by end time, ties by ticket.
    @Test(arguments: [0x1A4E_0001, 0x1A4E_0002] as [UInt64])
    func snapshotsMergeTheLanesByEndTime(seed: UInt64) {
        let flight = FlightRecorder(capacity: 1024)!
        let counts: [Int] = {
            var random = SeededRandom(seed: seed)
            return [200 + Int(random.next() % 300), 200 + Int(random.next() % 300)]
        }()
        // Two workers on two threads (two lanes, or one shared), or one after the other on one:
        // at most 1,000 spans, which fit one lane of 1,024.
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            var random = SeededRandom(seed: seed &+ UInt64(worker))
            var start: UInt64 = 0
            for _ in 0..<counts[worker] {
                start += 1 + random.next() % 1_000
                flight.record(
                    "lane.merge", startNanos: start, durationNanos: random.next() % 500, budgetNanos: nil,
                    exit: .success)
            }
        }
        let entries = flight.snapshot().entries
        #expect(entries.count == counts.reduce(0, +), "seed \(seed)")
        let ends = entries.map { $0.startMonotonicNanos + $0.durationNanos }
        #expect(ends == ends.sorted(), "seed \(seed)")
    }

    /// A crashed process's ring reads back like the live one: merged by end time, every lane's
    /// tickets counted; a lanes word this build does not know reads as one lane.
    @Test func aRecoveredRingCountsEveryLane() throws {
        let directory = try TemporaryDirectory("flight-lanes")
        defer { directory.remove() }
        let path = directory.file("spans.map").path
        let memory = try SpanMemory.create(
            path: path, .init(bytes: 2 << 20, nameCapacity: 8, ringCapacity: 4096), anchorMonotonicNanos: 0,
            anchorWallNanos: 1_700_000_000_000_000_000)
        let registry = HistogramRegistry(memory: memory)
        let flight = try #require(FlightRecorder(memory: memory))
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            for index in 0..<2_000 as Range<UInt64> {
                let ref = registry.record("lane.recovered", nanos: 100)
                flight.record(
                    "lane.recovered", nameRef: ref, startNanos: 1_000 * index + UInt64(worker), durationNanos: 100,
                    budgetNanos: nil, exit: .success)
            }
        }
        let live = flight.snapshot()
        let read = try #require(try RecoveredSpanMemory.read(path: path))
        #expect(read.spans == live.entries)
        // Each lane's newest ticket plus one, summed; the live count adds unused block tails.
        #expect(read.recorded <= live.recorded && read.recorded + 3 * 64 >= live.recorded)
        #expect(read.recorded >= 6_000)
        #expect(read.spans.count == 4_096 && read.ringCapacity == 4_096)
        memory.close()

        #expect(SpanMemoryImage.lanes(word: 0, ringCapacity: 4096) == 1)
        #expect(SpanMemoryImage.lanes(word: 2, ringCapacity: 4096) == 2)
        #expect(SpanMemoryImage.lanes(word: 4, ringCapacity: 4096) == 4)
        for junk: UInt64 in [3, 8, 1 << 40, .max] {
            #expect(SpanMemoryImage.lanes(word: junk, ringCapacity: 4096) == 1, "\(junk)")
        }
        #expect(SpanMemoryImage.lanes(word: 2, ringCapacity: 0) == 1)
    }
}
