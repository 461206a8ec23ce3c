// The span clock's reads beside CLOCK_MONOTONIC: raw rdtsc, perf_fast_ns() as spans
// read it once calibrated, and the same read with the fallback forced.
import CPerfShims
import PerfCore

enum ClockBenchmarks {
    static let group = BenchGroup(name: "clock") { context in
        let batches = context.scaled(200, quick: 40)
        let iterations = context.scaled(100_000, quick: 20_000)
        SpanClock.shared.calibrateNow()
        let source = SpanClock.shared.source

        readRow(
            context, batches: batches, iterations: iterations, name: "rdtsc read",
            note: perf_tsc_supported() != 0 ? "plain rdtsc, unscaled" : "no TSC on this architecture: reads 0"
        ) { perf_rdtsc() }
        readRow(
            context, batches: batches, iterations: iterations, name: "fast clock read",
            note: "perf_fast_ns(), what spans read; span clock: \(source), "
                + "largest offset slewed out so far \(SpanClock.shared.largestOffsetNanos) ns"
        ) { perf_fast_ns() }
        let forced = SpanClock(host: SpanClockHost.system)
        forced.forceMonotonic(reason: "forced by perf-bench")
        readRow(
            context, batches: batches, iterations: iterations, name: "fast clock read, fallback forced",
            note: "span clock: \(forced.source); the disabled check is one load and a branch"
        ) { forced.nanos() }
    }

    /// One clock read `read` against a CLOCK_MONOTONIC read, batches alternating, as one row.
    @inline(__always)
    private static func readRow(
        _ context: BenchContext, batches: Int, iterations: Int, name: String, note: String, read: () -> UInt64
    ) {
        let measured = Bench.alternating(batches: batches, iterations: iterations) { count in
            monotonicReads(count)
        } subject: { count in
            var total: UInt64 = 0
            for _ in 0..<count { total &+= read() }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "clock", name: name, unit: "ns/op", median: measured.subject.median,
                p99: measured.subject.p99, p999: measured.subject.p999, baseline: "CLOCK_MONOTONIC read (same run)",
                baselineMedian: measured.baseline.median, baselineP99: measured.baseline.p99,
                ratio: measured.subject.median / measured.baseline.median, note: note))
    }

    private static func monotonicReads(_ count: Int) {
        var total: UInt64 = 0
        for _ in 0..<count { total &+= perf_monotonic_ns() }
        Bench.blackHole(total)
    }
}
