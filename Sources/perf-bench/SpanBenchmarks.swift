// The span group: the scoped hot path (histogram tick and flight recorder, as Perf.install sets
// it up) against a CLOCK_MONOTONIC read pair measured in the same run, its allocations, the same
// from two threads, the flight recorder's own share, measure, keyed spans, and the slow path.
import CPerfShims
import Foundation
import PerfCore

enum SpanBenchmarks {
    static let group = BenchGroup(name: "span") { context in run(context) }

    static let hotPathAllocationsRow = "scoped begin+end allocations"

    private static let site = CallSite()
    private static let underBudgetNanos: UInt64 = 1_000_000_000

    private static func run(_ context: BenchContext) {
        // These rows time spans with CLOCK_MONOTONIC, whichever group ran before, so they measure
        // the same clock on every host; the facade group has the TSC rows. Later groups get the TSC
        // back, calibrated.
        SpanClock.shared.forceMonotonic(reason: "forced by perf-bench for the span group")
        defer {
            SpanClock.shared.allowTSC()
            SpanClock.shared.calibrateNow()
        }
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: RecordPipeline(), flightRecorder: FlightRecorder(capacity: 4096)!
        )
        let batches = context.scaled(200, quick: 30)
        let iterations = context.scaled(100_000, quick: 20_000)

        let single = alternating(recorder: recorder, batches: batches, iterations: iterations)
        let allocations = Bench.allocationsPerOp(iterations: 10_000) {
            recorder.end(recorder.begin("bench.span", budgetNanos: underBudgetNanos, site: site))
        }
        context.add(
            row(
                "scoped begin+end (under budget, histogram tick)", single, target: "≤ 1.3× baseline",
                pass: single.span.median <= 1.3 * single.baseline.median, allocations: allocations))
        context.add(
            BenchRow(
                group: "span", name: hotPathAllocationsRow, unit: "allocs/op", median: allocations,
                baseline: nil, target: "0", pass: allocations == 0,
                note: "10,000 begin+end pairs (malloc calls counted)"))

        let perThread = Bench.concurrently(threads: 2) { _ in
            alternating(recorder: recorder, batches: batches, iterations: iterations)
        }
        let twoThreads = (
            span: Distribution(perThread.map(\.span.median)), baseline: Distribution(perThread.map(\.baseline.median))
        )
        let twoThreadAllocations = allocationsFromTwoThreads(recorder: recorder, iterations: 10_000)
        context.add(
            row(
                "scoped begin+end, 2 threads (median of thread medians)", twoThreads, target: "≤ 1.3× baseline",
                pass: twoThreads.span.median <= 1.3 * twoThreads.baseline.median, allocations: twoThreadAllocations))
        context.add(
            BenchRow(
                group: "span", name: "scoped begin+end allocations, 2 threads", unit: "allocs/op",
                median: twoThreadAllocations, baseline: nil, target: "0", pass: twoThreadAllocations == 0,
                note: "2 × 10,000 begin+end pairs at once (malloc calls counted)"))

        let withoutRing = SpanRecorder(histograms: HistogramRegistry(), pipeline: RecordPipeline())
        let bare = alternating(recorder: withoutRing, batches: batches, iterations: iterations)
        var bareRow = row(
            "scoped begin+end without the flight recorder", bare, target: nil, pass: nil, allocations: nil)
        bareRow.note =
            "the flight recorder's share of the row above: \(String(format: "%.1f", single.span.median - bare.span.median)) ns"
        context.add(bareRow)

        probeRows(context, batches: batches, iterations: iterations)
        measure(context, recorder: recorder, batches: batches, iterations: iterations)
        keyed(context, baseline: single.span, batches: batches, iterations: max(1, iterations / 20))
        overBudget(context, baseline: single.span, batches: batches, iterations: max(1, iterations / 20))
        SpanContentionBenchmarks.run(context, batches: batches, iterations: iterations)
    }

    /// Alternates baseline and span batches so both see the same machine noise.
    private static func alternating(
        recorder: SpanRecorder, batches: Int, iterations: Int
    ) -> (span: Distribution, baseline: Distribution) {
        let measured = Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) {
            count in
            for _ in 0..<count {
                recorder.end(recorder.begin("bench.span", budgetNanos: underBudgetNanos, site: site))
            }
        }
        return (measured.subject, measured.baseline)
    }

    /// Both threads are created and parked before the probe is installed, so it counts only the
    /// span loops.
    private static func allocationsFromTwoThreads(recorder: SpanRecorder, iterations: Int) -> Double {
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                ready.signal()
                start.wait()
                for _ in 0..<iterations {
                    recorder.end(recorder.begin("bench.span", budgetNanos: underBudgetNanos, site: site))
                }
                done.signal()
            }.start()
        }
        ready.wait()
        ready.wait()
        let count = Bench.processAllocations {
            start.signal()
            start.signal()
            done.wait()
            done.wait()
        }
        return Double(count) / Double(2 * iterations)
    }

    /// `measure` around an empty body, sync and async, against the no-op `withSpan` of
    /// swift-distributed-tracing (a fixed figure, measured once on this machine): the aim is 5×
    /// cheaper.
    private static func measure(_ context: BenchContext, recorder: SpanRecorder, batches: Int, iterations: Int) {
        let sync = Bench.perOp(batches: batches, iterations: iterations) { count in
            var total = 0
            for _ in 0..<count {
                total &+= recorder.measure("bench.measure", budgetNanos: underBudgetNanos, site: site) { 1 }
            }
            Bench.blackHole(total)
        }
        let result = ResultBox<Distribution>(count: 1)
        let finished = DispatchSemaphore(value: 0)
        Task {
            var samples: [Double] = []
            for batch in -1..<batches {
                let start = Bench.now()
                var total = 0
                for _ in 0..<iterations {
                    total &+= await recorder.measure("bench.measure", budgetNanos: underBudgetNanos, site: site) {
                        () async -> Int in 1
                    }
                }
                Bench.blackHole(total)
                if batch >= 0 { samples.append(Double(Bench.now() - start) / Double(iterations)) }
            }
            result.set(0, Distribution(samples))
            finished.signal()
        }
        finished.wait()
        let async = result.values()[0]
        for (name, distribution, tracing) in [("measure, sync", sync, 340.0), ("measure, async", async, 661.0)] {
            context.add(
                BenchRow(
                    group: "span", name: name, unit: "ns/op", median: distribution.median, p99: distribution.p99,
                    p999: distribution.p999, baseline: "swift-distributed-tracing no-op withSpan (fixed figure)",
                    baselineMedian: tracing, ratio: distribution.median / tracing, target: "≤ 0.2× baseline",
                    pass: distribution.median <= 0.2 * tracing))
        }
    }

    /// A keyed span: registry insert and remove under its lock, plus the begin and end records
    /// through a pipeline with no sinks.
    private static func keyed(_ context: BenchContext, baseline: Distribution, batches: Int, iterations: Int) {
        let recorder = SpanRecorder(histograms: HistogramRegistry(), pipeline: RecordPipeline())
        let distribution = Bench.perOp(batches: batches, iterations: iterations) { count in
            for _ in 0..<count {
                recorder.begin(key: "bench", "bench.keyed", budgetNanos: underBudgetNanos, site: site)
                recorder.end(key: "bench")
            }
        }
        context.add(
            BenchRow(
                group: "span", name: "keyed begin+end (registered, no sinks)", unit: "ns/op",
                median: distribution.median, p99: distribution.p99, p999: distribution.p999,
                baseline: "scoped begin+end (under budget)", baselineMedian: baseline.median,
                ratio: distribution.median / baseline.median,
                note: "not a hot path: registry lock, begin and end records numbered"))
    }

    /// Every end is over budget: the record is built (wall clock read), numbered and delivered to
    /// an inline in-memory sink.
    private static func overBudget(_ context: BenchContext, baseline: Distribution, batches: Int, iterations: Int) {
        let pipeline = RecordPipeline()
        pipeline.addSink(InMemoryRecordSink(limit: 1_024), mode: .inline)
        let recorder = SpanRecorder(histograms: HistogramRegistry(), pipeline: pipeline)
        let distribution = Bench.perOp(batches: batches, iterations: iterations) { count in
            for _ in 0..<count { recorder.end(recorder.begin("bench.slow", budgetNanos: nil, site: site)) }
        }
        let allocations = Bench.allocationsPerOp(iterations: 1_000) {
            recorder.end(recorder.begin("bench.slow", budgetNanos: nil, site: site))
        }
        context.add(
            BenchRow(
                group: "span", name: "over-budget end into an inline in-memory sink", unit: "ns/op",
                median: distribution.median, p99: distribution.p99, p999: distribution.p999,
                baseline: "scoped begin+end (under budget)", baselineMedian: baseline.median,
                ratio: distribution.median / baseline.median, allocationsPerOp: allocations,
                note: "slow path: record built, wall clock read, sequence numbered, delivered inline"))
    }

    private static func row(
        _ name: String, _ measured: (span: Distribution, baseline: Distribution), target: String?, pass: Bool?,
        allocations: Double?
    ) -> BenchRow {
        BenchRow(
            group: "span", name: name, unit: "ns/op", median: measured.span.median, p99: measured.span.p99,
            p999: measured.span.p999, baseline: "CLOCK_MONOTONIC read pair (same run)",
            baselineMedian: measured.baseline.median, baselineP99: measured.baseline.p99,
            ratio: measured.span.median / measured.baseline.median, target: target, pass: pass,
            allocationsPerOp: allocations, note: "span clock: \(SpanClock.shared.source)")
    }
}
