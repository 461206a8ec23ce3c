// The span flight recorder: keeps the newest spans whole, counts every one, never tears an entry
// under concurrent writers and readers, and is written by every kind of span end.
import CPerfAllocCounter
import CPerfShims
import Dispatch
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct FlightRecorderTests {
    @Test func capacityRoundsUpToAPowerOfTwo() {
        #expect(FlightRecorder(capacity: 0)!.capacity == 1)
        #expect(FlightRecorder(capacity: 5)!.capacity == 8)
        #expect(FlightRecorder(capacity: 4096)!.capacity == 4096)
    }

    /// A capacity whose slot array would overflow `size_t` is refused, not allocated as a
    /// wrapped-around few bytes that the ring would then write far past; every size handed to
    /// aligned_alloc is a whole number of 64-byte lines (C11; sanitizers abort otherwise).
    @Test func aRingTooLargeToAllocateIsRefusedAndSmallRingsWork() {
        #expect(perf_flight_ring_create(UInt64(1) << 62) == nil)
        #expect(perf_flight_ring_create(3) == nil, "not a power of two")
        for capacity: UInt64 in [1, 2, 64, 4096] {
            let ring = perf_flight_ring_create(capacity)
            #expect(ring != nil && Int(bitPattern: ring) % 64 == 0)
            perf_flight_ring_destroy(ring)
        }
    }

    @Test func keepsTheNewestEntriesOldestFirstAndCountsEveryOne() {
        let flight = FlightRecorder(capacity: 8)!
        for index in 0..<20 as Range<UInt64> {
            flight.record(
                index.isMultiple(of: 2) ? "even" : "odd", startNanos: 1_000 * index, durationNanos: index,
                budgetNanos: index == 19 ? nil : 50, exit: index == 18 ? .failure : .success)
        }
        let snapshot = flight.snapshot()
        #expect(snapshot.recorded == 20)
        #expect(snapshot.entries.map(\.durationNanos) == Array(12..<20))
        #expect(snapshot.entries.map(\.name) == (12..<20).map { $0.isMultiple(of: 2) ? "even" : "odd" })
        #expect(snapshot.entries.last?.budgetNanos == nil)
        #expect(snapshot.entries.first?.budgetNanos == 50)
        #expect(snapshot.entries.map(\.exit).filter { $0 == .failure }.count == 1)
        #expect(Set(snapshot.entries.map(\.threadID)).count == 1)
        #expect(snapshot.entries.allSatisfy { $0.threadID > 0 })
    }

    /// A slot names the kernel thread that wrote it: the thread id travels with each thread's
    /// block of tickets, claimed per ring, so a thread moving from one ring to another never
    /// lends the first ring's block (or id) to the second.
    @Test func everySlotNamesTheThreadThatWroteIt() {
        let rings = [FlightRecorder(capacity: 4096)!, FlightRecorder(capacity: 4096)!]
        let tids = Mutex<[Int32: Int]>([:])
        HistogramRegistryTests.onThreads(4) { thread in
            tids.withLock { $0[perf_gettid()] = thread }
            for index in 0..<600 as Range<UInt64> {
                rings[index < 300 ? 0 : 1].record(
                    "tid.owner", startNanos: UInt64(thread) << 32 | index, durationNanos: 1, budgetNanos: nil,
                    exit: .success)
            }
        }
        let owners = tids.withLock { $0 }
        #expect(owners.count == 4)
        for ring in rings {
            let entries = ring.snapshot().entries
            #expect(entries.count == 1_200)
            for entry in entries {
                #expect(owners[entry.threadID] == Int(entry.startMonotonicNanos >> 32), "slot of \(entry.threadID)")
            }
        }
    }

    @Test func anEmptyRingSnapshotsNothing() {
        let snapshot = FlightRecorder(capacity: 4)!.snapshot()
        #expect(snapshot.entries.isEmpty)
        #expect(snapshot.recorded == 0)
    }

    @Test func everyExitSurvivesTheRing() {
        let flight = FlightRecorder(capacity: 8)!
        for exit in SpanExit.allCases {
            flight.record("exit", startNanos: 1, durationNanos: 1, budgetNanos: nil, exit: exit)
        }
        #expect(flight.snapshot().entries.map(\.exit) == SpanExit.allCases)
    }

    @Test(.countsAllocations) func recordingAllocatesNothing() {
        let flight = FlightRecorder(capacity: 64)!
        flight.record("warm", startNanos: 0, durationNanos: 0, budgetNanos: nil, exit: .success)
        let before = perf_thread_alloc_count()
        for index in 0..<10_000 {
            flight.record("alloc", startNanos: UInt64(index), durationNanos: 1, budgetNanos: 5, exit: .success)
        }
        #expect(perf_thread_alloc_count() - before == 0)
    }

    @Test func scopedAndRegisteredSpansAreRecordedWithTheirExits() {
        let clock = ManualClock()
        let timer = ManualExpiryTimer()
        let flight = FlightRecorder(capacity: 16)!
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: RecordPipeline(), clock: clock, expiryTimer: timer,
            flightRecorder: flight)
        let scoped = recorder.begin("scoped", budgetNanos: 1_000_000, site: CallSite())
        clock.advance(byNanos: 2_000)
        recorder.end(scoped, exit: .failure, reason: "E")
        recorder.begin(key: "k", "keyed", budgetNanos: nil, site: CallSite())
        recorder.begin(key: "k", "keyed", budgetNanos: nil, site: CallSite())
        _ = recorder.begin("bounded", budgetNanos: nil, lifetime: .bounded(budgetNanos: 1_000), site: CallSite())
        clock.advance(byNanos: 5_000)
        timer.fire()
        recorder.end(key: "k")
        let entries = flight.snapshot().entries
        #expect(entries.map(\.name) == ["scoped", "keyed", "bounded", "keyed"])
        #expect(entries.map(\.exit) == [.failure, .superseded, .expired, .success])
        #expect(entries[0].durationNanos == 2_000)
        #expect(entries[0].budgetNanos == 1_000_000)
        #expect(entries[2].durationNanos == 5_000)
    }

    @Test(.countsAllocations) func underBudgetSpansWithTheFlightRecorderAllocateNothing() {
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: RecordPipeline(), flightRecorder: FlightRecorder(capacity: 256)!)
        let site = CallSite()
        recorder.end(recorder.begin("alloc.flight", budgetNanos: 1_000_000_000, site: site))
        let before = perf_thread_alloc_count()
        for _ in 0..<10_000 {
            recorder.end(recorder.begin("alloc.flight", budgetNanos: 1_000_000_000, site: site))
        }
        #expect(perf_thread_alloc_count() - before == 0)
        // 256 slots: tickets come in blocks of 4.
        #expect(recorder.flightRecorder?.snapshot().recorded == 10_004)
    }

    /// Writers fill entries whose fields are functions of one number; a torn entry (fields from
    /// two writes) breaks the relation. A reader snapshots all along.
    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003] as [UInt64])
    func concurrentWritersAndReadersNeverSeeATornEntry(seed: UInt64) {
        let flight = FlightRecorder(capacity: 64)!
        var rng = SeededRandom(seed: seed)
        let counts = Self.writers.map { _ in 2_000 + Int(rng.next() % 3_000) }
        let done = Atomic<Int>(0)
        let log = ProblemLog()
        DispatchQueue.concurrentPerform(iterations: Self.writers.count + 1) { worker in
            guard worker < Self.writers.count else {
                while done.load(ordering: .acquiring) < Self.writers.count {
                    let snapshot = flight.snapshot()
                    if snapshot.entries.count > flight.capacity { log.add(["more entries than slots"]) }
                    log.add(Self.problems(in: snapshot.entries, final: false, counts: counts))
                }
                return
            }
            for sequence in 0..<UInt64(counts[worker]) {
                // Durations under the spacing of starts: a writer's spans end in order, as they do.
                let start = UInt64(worker) << 40 | sequence << 16
                flight.record(
                    Self.writers[worker], startNanos: start, durationNanos: Self.mix(start),
                    budgetNanos: start ^ 0xABC, exit: .success)
            }
            done.add(1, ordering: .releasing)
        }
        let final = flight.snapshot()
        // A 64-slot ring hands out single tickets, so the count is exact.
        #expect(final.recorded == UInt64(counts.reduce(0, +)), "seed \(seed)")
        #expect(final.entries.count == flight.capacity, "seed \(seed)")
        log.add(Self.problems(in: final.entries, final: true, counts: counts))
        let problems = log.items.withLock { $0 }
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(3))")
    }

    private static let writers: [StaticString] = ["writer.0", "writer.1", "writer.2"]

    /// Entries that are not whole, or out of order per writer; in the final snapshot, the last
    /// record of some writer must be there.
    private static func problems(in entries: [FlightRecorder.Entry], final: Bool, counts: [Int]) -> [String] {
        var problems: [String] = []
        var lastSequence: [Int: UInt64] = [:]
        var threadOf: [Int: Int32] = [:]
        for entry in entries {
            let start = entry.startMonotonicNanos
            let writer = Int(start >> 40)
            let sequence = (start & ((1 << 40) - 1)) >> 16
            let ordered = lastSequence[writer].map { sequence > $0 } ?? true
            let whole =
                writer < writers.count && entry.name == "writer.\(writer)" && entry.durationNanos == mix(start)
                && entry.budgetNanos == start ^ 0xABC && threadOf[writer, default: entry.threadID] == entry.threadID
            if !whole || !ordered { problems.append("bad entry \(entry)") }
            lastSequence[writer] = sequence
            threadOf[writer] = entry.threadID
        }
        // The last write of all is nobody's stale one, so some writer's final record is there.
        if final, !lastSequence.contains(where: { $0.value == UInt64(counts[$0.key] - 1) }) {
            problems.append("no writer's last record is in the ring: \(lastSequence)")
        }
        return problems
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        return (z ^ (z >> 27)) & 0xFFFF
    }
}

/// Problems found by any thread of a test.
private final class ProblemLog: Sendable {
    let items = Mutex<[String]>([])
    func add(_ problems: [String]) {
        guard !problems.isEmpty else { return }
        items.withLock { $0.append(contentsOf: problems) }
    }
}
