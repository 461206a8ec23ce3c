// The facade as users call it: inert calls before install, the under-budget span against a
// clock-read pair, and the over-budget end (encode + one write(2)) against a raw write(2).
import CPerfShims
import Foundation
import Glibc
import Perf
import PerfCore
import Synchronization

enum FacadeBenchmarks {
    static let group = BenchGroup(name: "facade") { context in try run(context) }

    private static func run(_ context: BenchContext) throws {
        let batches = context.scaled(200, quick: 30)
        let iterations = context.scaled(100_000, quick: 20_000)
        Perf.shutdown()
        inert(context, batches: batches, iterations: iterations)
        cycles(context, count: context.scaled(1_000, quick: 400))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perf-bench-facade-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "perf-bench"), recording: .enabled,
                ledgerCapBytes: 1 << 30))
        defer { Perf.shutdown() }
        // Rows with no clock in their name force CLOCK_MONOTONIC, the clock every host has, to time
        // spans; the TSC rows follow in the same run, so both ratios share one baseline noise.
        SpanClock.shared.forceMonotonic(reason: "forced by perf-bench for the CLOCK_MONOTONIC rows")
        let monotonicSource = SpanClock.shared.source
        underBudget(
            context, batches: batches, iterations: iterations, name: "Perf.begin+end under budget (histogram tick)",
            twoThreadsName: "Perf.begin+end under budget, 2 threads (mean of medians)", target: 1.3,
            clockNote: "span clock: \(monotonicSource)")
        SpanClock.shared.allowTSC()
        SpanClock.shared.calibrateNow()
        // The goal for the TSC clock: ≤ 0.6× the same pair.
        underBudget(
            context, batches: batches, iterations: iterations, name: "Perf.begin+end under budget, TSC clock",
            twoThreadsName: "Perf.begin+end under budget, TSC clock, 2 threads (mean of medians)", target: 0.6,
            clockNote: "span clock: \(SpanClock.shared.source)")
        spanFloor(context, batches: batches, iterations: iterations)
        children(context, batches: batches, iterations: iterations)
        probeCost(context, batches: batches, iterations: iterations)
        try overBudget(context, directory: directory, count: context.scaled(20_000, quick: 5_000))
    }

    /// Install/shutdown cycles in memory: the time of one cycle, and the RSS the second half of
    /// them added, as a ratio to its 1 MiB budget (a retired runtime is freed once no span can
    /// still hold it, so cycles must not add up).
    private static func cycles(_ context: BenchContext, count: Int) {
        let configuration = Perf.Configuration(app: Perf.AppInfo(name: "perf-bench"), recording: .disabled)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        var halfway: UInt64 = 0
        for cycle in 1...count {
            let start = Bench.now()
            Perf.install(configuration)
            Perf.begin("bench.cycle", slowMs: 1000).end()
            Perf.shutdown()
            samples.append(Double(Bench.now() - start))
            if cycle == count / 2 { halfway = LivePrometheus.residentMemoryBytes() ?? 0 }
        }
        let end = LivePrometheus.residentMemoryBytes() ?? 0
        let growth = Double(Int64(bitPattern: end &- halfway))
        let times = Distribution(samples)
        let freed = Perf.retiredRuntimeCounts()
        context.add(
            BenchRow(
                group: "facade", name: "install+shutdown cycle", unit: "ns/op", median: times.median, p99: times.p99,
                p999: times.p999, baseline: "1 MiB of RSS growth over the second half (the budget)",
                ratio: growth / Double(1 << 20), target: "RSS growth ≤ 1 MiB over the second \(count / 2) cycles",
                pass: growth <= Double(1 << 20) && freed.kept == 0,
                note: String(
                    format: "RSS growth over cycles %d–%d: %.0f KiB; ratio is that growth over 1 MiB; runtimes freed "
                        + "%d, kept %d", count / 2 + 1, count, growth / 1024, freed.freed, freed.kept),
                samples: count))
    }

    /// Stands in for the facade's "installed?" slot in the inert baseline.
    private static let slot = Atomic<Int>(0)

    /// Before install every call is one acquiring atomic load of the recorder slot. An empty loop
    /// is no baseline (the optimiser deletes it, leaving a ratio to nothing), nor is a call to a
    /// no-op function (deleted too); the baseline is that atomic load itself, once per iteration.
    private static func inert(_ context: BenchContext, batches: Int, iterations: Int) {
        let measured = Bench.alternating(
            batches: batches, iterations: iterations,
            baseline: { count in
                var total = 0
                for _ in 0..<count { total &+= slot.load(ordering: .acquiring) }
                Bench.blackHole(total)
            },
            subject: { count in
                for _ in 0..<count { Perf.begin("bench.inert", slowMs: 1000).end() }
            })
        let allocations = Bench.allocationsPerOp(iterations: 10_000) { Perf.begin("bench.inert", slowMs: 1000).end() }
        context.add(
            BenchRow(
                group: "facade", name: "inert begin+end (before install)", unit: "ns/op",
                median: measured.subject.median, p99: measured.subject.p99, p999: measured.subject.p999,
                baseline: "acquiring atomic load (the installed? check)", baselineMedian: measured.baseline.median,
                baselineP99: measured.baseline.p99, target: "≤ 5 ns, 0 allocs",
                pass: measured.subject.median <= 5 && allocations == 0,
                allocationsPerOp: allocations,
                note: "per-op cost of batches of \(iterations) calls; no ratio: under a nanosecond both loops are "
                    + "bound by instruction throughput (independent loads overlap), so a ratio measures the loop, "
                    + "not the call; the target is absolute",
                samples: batches))
    }

    /// Under-budget `Perf.begin`/`end` against a CLOCK_MONOTONIC read pair in the same run, from one
    /// thread and from two, on whichever span clock is in force (named in `clockNote`).
    private static func underBudget(
        _ context: BenchContext, batches: Int, iterations: Int, name: String, twoThreadsName: String, target: Double,
        clockNote: String
    ) {
        let measured = Bench.alternating(
            batches: batches, iterations: iterations, baseline: Bench.clockPairs
        ) { count in
            for _ in 0..<count { Perf.begin("bench.facade", slowMs: 1000).end() }
        }
        let allocations = Bench.allocationsPerOp(iterations: 10_000) { Perf.begin("bench.facade", slowMs: 1000).end() }
        let ratio = measured.subject.median / measured.baseline.median
        context.add(
            BenchRow(
                group: "facade", name: name, unit: "ns/op",
                median: measured.subject.median, p99: measured.subject.p99, p999: measured.subject.p999,
                baseline: "CLOCK_MONOTONIC read pair", baselineMedian: measured.baseline.median,
                baselineP99: measured.baseline.p99, ratio: ratio, target: "≤ \(target)× baseline, 0 allocs",
                pass: ratio <= target && allocations == 0, allocationsPerOp: allocations, note: clockNote,
                samples: batches))
        twoThreads(
            context, batches: batches, iterations: iterations, name: twoThreadsName, target: target,
            clockNote: clockNote)
    }

    /// A child span inside a synchronous `Perf.measure` (its time added to the parent's scope), and
    /// a `Perf.measure` with no child, each against a CLOCK_MONOTONIC read pair in the same run.
    private static func children(_ context: BenchContext, batches: Int, iterations: Int) {
        let child = Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) { count in
            Perf.measure("bench.parent", slowMs: 60_000) {
                for _ in 0..<count { Perf.begin("bench.child", slowMs: 1000).end() }
            }
        }
        let childAllocations = Perf.measure("bench.parent", slowMs: 60_000) {
            Bench.allocationsPerOp(iterations: 10_000) { Perf.begin("bench.child", slowMs: 1000).end() }
        }
        let measure = Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) { count in
            for _ in 0..<count { Perf.measure("bench.measure", slowMs: 1000) { Bench.blackHole(count) } }
        }
        let measureAllocations = Bench.allocationsPerOp(iterations: 10_000) {
            Perf.measure("bench.measure", slowMs: 1000) { Bench.blackHole(1) }
        }
        for (name, measured, allocations) in [
            ("child begin+end inside a synchronous Perf.measure, TSC clock", child, childAllocations),
            ("Perf.measure (synchronous, no child), TSC clock", measure, measureAllocations),
        ] {
            let ratio = measured.subject.median / measured.baseline.median
            context.add(
                BenchRow(
                    group: "facade", name: name, unit: "ns/op", median: measured.subject.median,
                    p99: measured.subject.p99, p999: measured.subject.p999, baseline: "CLOCK_MONOTONIC read pair",
                    baselineMedian: measured.baseline.median, baselineP99: measured.baseline.p99, ratio: ratio,
                    target: "≤ 0.7× baseline, 0 allocs", pass: ratio <= 0.7 && allocations == 0,
                    allocationsPerOp: allocations, note: "span clock: \(SpanClock.shared.source)", samples: batches))
        }
    }

    private static func probeCost(_ context: BenchContext, batches: Int, iterations: Int) {
        let allocations = Bench.allocationsPerOp(iterations: 10_000) { Perf.begin("bench.facade", slowMs: 1000).end() }
        // The span_end probe as users compile it, against the same facade call with the probe
        // compiled out (the goal: within 2 % or 1 ns when no tracer listens).
        let probe = Bench.alternating(batches: batches, iterations: iterations) { count in
            for _ in 0..<count { Perf.begin("bench.facade", slowMs: 1000).endWithoutProbe() }
        } subject: { count in
            for _ in 0..<count { Perf.begin("bench.facade", slowMs: 1000).end() }
        }
        let probeDifference = probe.subject.median - probe.baseline.median
        context.add(
            BenchRow(
                group: "facade", name: "Perf.begin+end under budget, probes compiled in (no tracer)", unit: "ns/op",
                median: probe.subject.median, p99: probe.subject.p99, p999: probe.subject.p999,
                baseline: "the same Perf.begin+end, probe compiled out (same run)",
                baselineMedian: probe.baseline.median, baselineP99: probe.baseline.p99,
                ratio: probe.subject.median / probe.baseline.median, target: "≤ compiled out + 2 % (or + 1 ns)",
                pass: probeDifference <= max(1.0, 0.02 * probe.baseline.median) && allocations == 0,
                allocationsPerOp: allocations,
                note: String(
                    format: "difference %+.2f ns/op; batches alternate; the semaphore load and its "
                        + "untaken branch are what a program pays; span clock: %@", probeDifference,
                    SpanClock.shared.source.description),
                samples: batches))
    }

    /// The under-budget pair from two threads at once, each against its own clock-pair baseline.
    static func twoThreads(
        _ context: BenchContext, batches: Int, iterations: Int, name: String, target: Double, clockNote: String
    ) {
        let perThread = Bench.concurrently(threads: 2) { _ in
            Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) { count in
                for _ in 0..<count { Perf.begin("bench.facade", slowMs: 1000).end() }
            }
        }
        let subject = perThread.map(\.subject.median).reduce(0, +) / Double(perThread.count)
        let baseline = perThread.map(\.baseline.median).reduce(0, +) / Double(perThread.count)
        // Each thread counts its own allocations (after a warm-up call) while both run at once.
        let threadedAllocations =
            Bench.concurrently(threads: 2) { _ in
                Bench.allocationsPerOp(iterations: 10_000) { Perf.begin("bench.facade", slowMs: 1000).end() }
            }.max() ?? 0
        context.add(
            BenchRow(
                group: "facade", name: name, unit: "ns/op",
                median: subject, p99: perThread.map(\.subject.p99).max(), p999: perThread.map(\.subject.p999).max(),
                baseline: "CLOCK_MONOTONIC read pair, 2 threads", baselineMedian: baseline,
                baselineP99: perThread.map(\.baseline.p99).max(), ratio: subject / baseline,
                target: "≤ \(target)× baseline, 0 allocs",
                pass: subject / baseline <= target && threadedAllocations == 0, allocationsPerOp: threadedAllocations,
                note: "p99 and p99.9 are the worse thread's; allocs/op of the worse thread, both running at once; "
                    + clockNote,
                samples: batches * perThread.count))
    }

    /// Each over-budget end writes one ledger line; the baseline writes the same bytes with one
    /// raw `write(2)` on an O_APPEND descriptor in the same directory, alternating.
    private static func overBudget(_ context: BenchContext, directory: URL, count: Int) throws {
        let raw = try RawLedgerLines(directory: directory, name: "bench.slow")
        defer { raw.close() }
        var spanSamples: [Double] = []
        var rawSamples: [Double] = []
        spanSamples.reserveCapacity(count)
        rawSamples.reserveCapacity(count)
        for index in -100..<count {
            var start = Bench.now()
            let written = raw.write()
            let raw = Double(Bench.now() - start)
            Bench.blackHole(written)
            start = Bench.now()
            Perf.begin("bench.slow", slowMs: 0).end(detail: "/v1/threads", count: index)
            let span = Double(Bench.now() - start)
            if index >= 0 {
                rawSamples.append(raw)
                spanSamples.append(span)
            }
        }
        let spans = Distribution(spanSamples)
        let raws = Distribution(rawSamples)
        context.add(
            BenchRow(
                group: "facade", name: "over-budget end → ledger line", unit: "ns/op", median: spans.median,
                p99: spans.p99, p999: spans.p999, baseline: "raw write(2) of a same-size line",
                baselineMedian: raws.median, baselineP99: raws.p99, ratio: spans.median / raws.median,
                target: "≤ 3.5× raw write", pass: spans.median / raws.median <= 3.5,
                note: "span record built, privacy filter, hand-written encoder, one write(2) on O_APPEND",
                samples: count))
    }
}
