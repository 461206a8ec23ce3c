// The span memory group: what keeping span histograms and the flight recorder in a file mapped
// MAP_SHARED costs. Resident memory for 1,000 names × 32 threads against a heap-allocated layout
// emulated in the same run (SpanMemoryRSSBenchmarks.swift); the tail of individually timed spans
// over anonymous memory, a file, a file whose pages another thread writes back every 5 ms and one
// written back every half ring lap (so stores take write faults), beside a timed clock pair; and
// the scoped hot path over a file against a CLOCK_MONOTONIC read pair from 1 and 2 threads, as the
// span group measures it over anonymous memory.
import CPerfShims
import Foundation
import Glibc
import PerfCore
import Synchronization

enum SpanMemoryBenchmarks {
    static let group = BenchGroup(name: "span-memory") { context in
        SpanClock.shared.calibrateNow()  // the TSC span clock throughout, even with --only
        try run(context)
    }

    private static let site = CallSite()
    private static let underBudgetNanos: UInt64 = 1_000_000_000
    /// Perf.install's defaults: 8 MiB, 1,024 names, 4,096 flight recorder slots.
    private static let configuration = SpanMemory.Configuration()

    private static func run(_ context: BenchContext) throws {
        try SpanMemoryRSS.run(context)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "perf-bench-span-memory-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try tails(context, directory: directory.path)
        try hotPath(context, directory: directory.path)
    }

    private static func recorder(over memory: SpanMemory) -> SpanRecorder {
        SpanRecorder(
            histograms: HistogramRegistry(memory: memory), pipeline: RecordPipeline(),
            flightRecorder: FlightRecorder(memory: memory))
    }

    // MARK: - Tails

    /// One variant of the timed loop: its recorder (nil for the clock pair alone), its samples and
    /// the minor faults the timing thread took while it ran.
    private final class TailVariant {
        let title: String
        let recorder: SpanRecorder?
        /// Written back (msync) on the timing thread, between timed spans, every `lap` spans.
        let writtenBack: SpanMemory?
        var samples: [UInt64]
        var filled = 0
        var minorFaults = 0
        var majorFaults = 0
        var synchronizeCalls = 0
        /// With a heartbeat: spans timed after each write-back before the pages are re-dirtied.
        let redirtyAfter: Int?
        var redirtyCalls = 0
        var redirtyNanos: UInt64 = 0
        /// Faults the re-dirtying took (on the timing thread here, on the heartbeat's in Perf).
        var redirtyFaults = 0

        init(
            _ title: String, recorder: SpanRecorder?, count: Int, writtenBack: SpanMemory? = nil,
            redirtyAfter: Int? = nil
        ) {
            self.title = title
            self.recorder = recorder
            self.writtenBack = writtenBack
            self.redirtyAfter = redirtyAfter
            samples = [UInt64](repeating: 0, count: count)
        }
    }

    /// Spans between two write-backs of the slow-process variant: half a lap of the default
    /// 4,096-slot ring, so every ring page is written back between two visits.
    private static let slowProcessSpans = 2_048
    private static let slowProcessSpansText = "2,048"
    /// Spans between a write-back and the heartbeat's re-dirtying, scaled as the write-backs are:
    /// the kernel writes a page back every 30 s and the heartbeat comes within 1 s, on average
    /// half a second later: 1/60 of the spans between two write-backs.
    private static let heartbeatSpans = 2_048 / 60

    /// Times each begin+end on its own (`t0; begin; end; t1`), the variants interleaved in rounds
    /// so they share the machine's noise.
    private static func tails(_ context: BenchContext, directory: String) throws {
        let count = context.scaled(1_000_000, quick: 200_000)
        let rounds = context.scaled(10, quick: 4)
        let perRound = count / rounds
        let anonymous = try SpanMemory.anonymous(configuration)
        let file = try SpanMemory.create(path: directory + "/tail-file.map", configuration)
        let synced = try SpanMemory.create(path: directory + "/tail-synced.map", configuration)
        let slow = try SpanMemory.create(path: directory + "/tail-slow.map", configuration)
        let beating = try SpanMemory.create(path: directory + "/tail-beating.map", configuration)
        defer {
            file.close()
            synced.close()
            slow.close()
            beating.close()
        }
        let variants = [
            TailVariant("clock pair around nothing", recorder: nil, count: perRound * rounds),
            TailVariant("anonymous span memory", recorder: recorder(over: anonymous), count: perRound * rounds),
            TailVariant("file-backed span memory", recorder: recorder(over: file), count: perRound * rounds),
            TailVariant(
                "file-backed, msync(MS_SYNC) every 5 ms", recorder: recorder(over: synced),
                count: perRound * rounds),
            TailVariant(
                "file-backed, written back every \(slowProcessSpansText) spans (a slow process)",
                recorder: recorder(over: slow),
                count: perRound * rounds, writtenBack: slow),
            TailVariant(
                "file-backed, written back every \(slowProcessSpansText) spans, heartbeat re-dirtying",
                recorder: recorder(over: beating), count: perRound * rounds, writtenBack: beating,
                redirtyAfter: heartbeatSpans),
        ]
        let writeback = WritebackDriver(memory: synced)
        writeback.start()
        for variant in variants { time(variant.recorder, count: 10_000, into: &variant.samples, from: 0) }
        for _ in 0..<rounds {
            for (index, variant) in variants.enumerated() {
                if index == 3 { writeback.active.store(true, ordering: .releasing) }
                let faults = threadFaults()
                if let memory = variant.writtenBack {
                    var done = 0
                    while done < perRound {
                        let step = min(slowProcessSpans, perRound - done)
                        if let first = variant.redirtyAfter, variant.synchronizeCalls > 0 {
                            // The heartbeat's turn comes `first` spans after the write-back.
                            let before = min(first, step)
                            time(variant.recorder, count: before, into: &variant.samples, from: variant.filled + done)
                            let start = Bench.now()
                            let faultsBefore = threadFaults().minor
                            memory.redirtyResidentPages()
                            variant.redirtyFaults += threadFaults().minor - faultsBefore
                            variant.redirtyNanos += Bench.now() - start
                            variant.redirtyCalls += 1
                            time(
                                variant.recorder, count: step - before, into: &variant.samples,
                                from: variant.filled + done + before)
                        } else {
                            time(variant.recorder, count: step, into: &variant.samples, from: variant.filled + done)
                        }
                        memory.synchronize()
                        variant.synchronizeCalls += 1
                        done += step
                    }
                } else {
                    time(variant.recorder, count: perRound, into: &variant.samples, from: variant.filled)
                }
                let after = threadFaults()
                if index == 3 { writeback.active.store(false, ordering: .releasing) }
                variant.filled += perRound
                variant.minorFaults += after.minor - faults.minor
                variant.majorFaults += after.major - faults.major
            }
        }
        writeback.stop()

        let distributions = variants.map { Distribution($0.samples.map { Double($0) }) }
        let clock = distributions[0]
        let anonymousTail = distributions[1]
        for (index, variant) in variants.enumerated() {
            let distribution = distributions[index]
            var note =
                "\(variant.samples.count) spans timed one by one (t0; begin; end; t1) in \(rounds) rounds "
                + "interleaved with the other variants; max \(variant.samples.max() ?? 0) ns; "
                + "\(variant.samples.count { $0 > 10_000 }) over 10 µs; \(variant.minorFaults) minor and "
                + "\(variant.majorFaults) major faults on the timing thread"
            var row = BenchRow(
                group: "span-memory", name: "begin+end timed one by one, \(variant.title)", unit: "ns/op",
                median: distribution.median, p99: distribution.p99, p999: distribution.p999,
                samples: variant.samples.count)
            switch index {
            case 0:
                note += "; the floor of every row below"
            case 1:
                row.baseline = "clock pair around nothing (same run)"
                row.baselineMedian = clock.median
                row.baselineP99 = clock.p99
                row.ratio = distribution.median / clock.median
                note += "; span memory and flight recorder in anonymous pages, default sizes"
            default:
                row.baseline = "anonymous span memory, p99.9 (same run)"
                row.baselineMedian = anonymousTail.p999
                row.ratio = distribution.p999 / anonymousTail.p999
                row.target = "p99.9 ≤ 1.5× anonymous p99.9"
                row.pass = distribution.p999 <= 1.5 * anonymousTail.p999
                note += "; ratio is p99.9 / anonymous p99.9; " + tailNote(index, variant, writeback, directory)
            }
            row.note = note
            context.add(row)
        }
    }

    /// What a file-backed tail row says about its writeback.
    private static func tailNote(
        _ index: Int, _ variant: TailVariant, _ writeback: WritebackDriver, _ directory: String
    ) -> String {
        let faultsPerPage =
            "on a filesystem that writes pages back (not tmpfs) the next store to each written-back "
            + "page takes a write fault"
        switch index {
        case 2:
            return "file mapped MAP_SHARED on \(SpanMemoryRSS.filesystem(directory)), no writeback during the run "
                + "(the kernel writes back pages dirty for 30 s)"
        case 3:
            let calls = writeback.calls.load(ordering: .acquiring)
            return "a thread called synchronize() \(calls) times (\(writeback.failures.load(ordering: .acquiring)) "
                + "failed), "
                + String(format: "%.2f ms on average, %.2f ms at most", writeback.meanMillis, writeback.maxMillis)
                + "; \(faultsPerPage), as after the kernel's own writeback of pages dirty for 30 s (here ~1,000× as "
                + "often): \(calls == 0 ? 0 : variant.minorFaults / calls) faults a call"
        case 5:
            let calls = variant.synchronizeCalls
            let mean = variant.redirtyCalls == 0 ? 0 : Double(variant.redirtyNanos) / Double(variant.redirtyCalls) / 1e3
            return "as the row above, and \(heartbeatSpans) spans after each write-back (the kernel writes back every "
                + "30 s; Perf's heartbeat comes within 1 s, half a second on average: 1/60 of the spans between two "
                + "write-backs) redirtyResidentPages() stores to every resident page, as the heartbeat does, outside "
                + "the timed spans (\(variant.redirtyCalls) calls, " + String(format: "%.1f µs", mean)
                + " on average, \(variant.redirtyFaults) faults, all of which the heartbeat's thread takes in Perf): "
                + "\(calls == 0 ? 0 : (variant.minorFaults - variant.redirtyFaults) / calls) faults a write-back left "
                + "to the timed spans (the pages they touch before the heartbeat comes)"
        default:
            let calls = variant.synchronizeCalls
            return "the timing thread called synchronize() after every \(slowProcessSpansText) spans (\(calls) times, "
                + "outside the timed spans), so every page of the 4,096-slot ring (64 spans a page) is written back "
                + "between two visits, as for a process whose ring laps more slowly than the kernel writes back "
                + "(fewer than ~140 spans/s against 30 s); \(faultsPerPage): "
                + "\(calls == 0 ? 0 : variant.minorFaults / calls) faults a call"
        }
    }

    /// The timed loop, kept out of line so every variant runs the same code.
    @inline(never)
    private static func time(_ recorder: SpanRecorder?, count: Int, into samples: inout [UInt64], from offset: Int) {
        samples.withUnsafeMutableBufferPointer { buffer in
            if let recorder {
                for index in offset..<offset + count {
                    let start = perf_monotonic_ns()
                    recorder.end(recorder.begin("bench.span-memory", budgetNanos: underBudgetNanos, site: site))
                    buffer[index] = perf_monotonic_ns() &- start
                }
            } else {
                for index in offset..<offset + count {
                    let start = perf_monotonic_ns()
                    buffer[index] = perf_monotonic_ns() &- start
                }
            }
        }
    }

    private static func threadFaults() -> (minor: Int, major: Int) {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD (Linux), which Glibc's module does not export
        return (usage.ru_minflt, usage.ru_majflt)
    }

    // MARK: - Hot path

    /// The span group's scoped row over a file-backed span memory: alternating batches against a
    /// CLOCK_MONOTONIC read pair, from 1 and 2 threads, with allocations counted.
    private static func hotPath(_ context: BenchContext, directory: String) throws {
        let batches = context.scaled(200, quick: 30)
        let iterations = context.scaled(100_000, quick: 20_000)
        let memory = try SpanMemory.create(path: directory + "/hot.map", configuration)
        defer { memory.close() }
        let recorder = recorder(over: memory)
        let single = alternating(recorder, batches: batches, iterations: iterations)
        let allocations = Bench.allocationsPerOp(iterations: 10_000) { span(recorder) }
        let ratio = single.subject.median / single.baseline.median
        context.add(
            BenchRow(
                group: "span-memory", name: "scoped begin+end, file-backed span memory", unit: "ns/op",
                median: single.subject.median, p99: single.subject.p99, p999: single.subject.p999,
                baseline: "CLOCK_MONOTONIC read pair (same run)", baselineMedian: single.baseline.median,
                baselineP99: single.baseline.p99, ratio: ratio, target: "≤ 1.3× baseline, 0 allocs",
                pass: ratio <= 1.3 && allocations == 0, allocationsPerOp: allocations,
                note: "histogram and flight recorder in a file mapped MAP_SHARED (Perf.install's default sizes); "
                    + "per-op cost of \(batches) alternating batches of \(iterations); allocs over 10,000 pairs",
                samples: batches))

        let perThread = Bench.concurrently(threads: 2) { _ in
            alternating(recorder, batches: batches, iterations: iterations)
        }
        let threadAllocations =
            Bench.concurrently(threads: 2) { _ in
                Bench.allocationsPerOp(iterations: 10_000) { span(recorder) }
            }.max() ?? 0
        let subject = Distribution(perThread.map(\.subject.median))
        let baseline = Distribution(perThread.map(\.baseline.median))
        let twoRatio = subject.median / baseline.median
        context.add(
            BenchRow(
                group: "span-memory",
                name: "scoped begin+end, file-backed span memory, 2 threads (median of thread medians)",
                unit: "ns/op", median: subject.median, p99: perThread.map(\.subject.p99).max(),
                p999: perThread.map(\.subject.p999).max(), baseline: "CLOCK_MONOTONIC read pair, 2 threads",
                baselineMedian: baseline.median, baselineP99: perThread.map(\.baseline.p99).max(), ratio: twoRatio,
                target: "≤ 1.3× baseline, 0 allocs", pass: twoRatio <= 1.3 && threadAllocations == 0,
                allocationsPerOp: threadAllocations,
                note: "median as the span group's 2-thread row; p99 and p99.9 are the worse thread's; allocs/op "
                    + "of the worse thread, each counting its own 10,000 pairs while both run",
                samples: batches * 2))
    }

    @inline(__always)
    private static func span(_ recorder: SpanRecorder) {
        recorder.end(recorder.begin("bench.span-memory.hot", budgetNanos: underBudgetNanos, site: site))
    }

    private static func alternating(
        _ recorder: SpanRecorder, batches: Int, iterations: Int
    ) -> (subject: Distribution, baseline: Distribution) {
        Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) { count in
            for _ in 0..<count { span(recorder) }
        }
    }
}

/// Writes a span memory's pages back every 5 ms while `active`, from a thread of its own, so that
/// the timed thread's next store to each page takes a write fault.
private final class WritebackDriver: Sendable {
    let memory: SpanMemory
    let active = Atomic<Bool>(false)
    let calls = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    private let totalNanos = Atomic<UInt64>(0)
    private let longestNanos = Atomic<UInt64>(0)
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(memory: SpanMemory) { self.memory = memory }

    var meanMillis: Double {
        let calls = calls.load(ordering: .acquiring)
        return calls == 0 ? 0 : Double(totalNanos.load(ordering: .acquiring)) / Double(calls) / 1e6
    }

    var maxMillis: Double { Double(longestNanos.load(ordering: .acquiring)) / 1e6 }

    func start() {
        Thread { [self] in
            while !stopping.load(ordering: .acquiring) {
                guard active.load(ordering: .acquiring) else {
                    usleep(200)
                    continue
                }
                let start = Bench.now()
                if memory.synchronize() != 0 { failures.add(1, ordering: .relaxed) }
                let elapsed = Bench.now() - start
                totalNanos.add(elapsed, ordering: .relaxed)
                if elapsed > longestNanos.load(ordering: .relaxed) { longestNanos.store(elapsed, ordering: .relaxed) }
                calls.add(1, ordering: .releasing)
                usleep(5_000)
            }
            stopped.signal()
        }.start()
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        stopped.wait()
    }
}
