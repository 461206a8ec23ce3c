// The span clock's reads beside CLOCK_MONOTONIC (issue 17): raw rdtsc, perf_fast_ns() as spans
// read it once calibrated, and the same read with the fallback forced.
import CPerfShims
import PerfCore

enum ClockBenchmarks {
    static let group = BenchGroup(name: "clock") { context in
        let batches = context.scaled(200, quick: 40)
        let iterations = context.scaled(100_000, quick: 20_000)
        SpanClock.shared.calibrateNow()
        let source = SpanClock.shared.source

        let rdtsc = Bench.alternating(batches: batches, iterations: iterations) { count in
            monotonicReads(count)
        } subject: { count in
            var total: UInt64 = 0
            for _ in 0..<count { total &+= perf_rdtsc() }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "clock", name: "rdtsc read", unit: "ns/op", median: rdtsc.subject.median,
                p99: rdtsc.subject.p99, p999: rdtsc.subject.p999, baseline: "CLOCK_MONOTONIC read (same run)",
                baselineMedian: rdtsc.baseline.median, baselineP99: rdtsc.baseline.p99,
                ratio: rdtsc.subject.median / rdtsc.baseline.median,
                note: perf_tsc_supported() != 0 ? "plain rdtsc, unscaled" : "no TSC on this architecture: reads 0"))

        let fast = Bench.alternating(batches: batches, iterations: iterations) { count in
            monotonicReads(count)
        } subject: { count in
            var total: UInt64 = 0
            for _ in 0..<count { total &+= perf_fast_ns() }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "clock", name: "fast clock read", unit: "ns/op", median: fast.subject.median,
                p99: fast.subject.p99, p999: fast.subject.p999, baseline: "CLOCK_MONOTONIC read (same run)",
                baselineMedian: fast.baseline.median, baselineP99: fast.baseline.p99,
                ratio: fast.subject.median / fast.baseline.median,
                note: "perf_fast_ns(), what spans read; span clock: \(source), "
                    + "largest offset slewed out so far \(SpanClock.shared.largestOffsetNanos) ns"))

        let forced = SpanClock(host: SpanClockHost.system)
        forced.forceMonotonic(reason: "forced by perf-bench")
        let fallback = Bench.alternating(batches: batches, iterations: iterations) { count in
            monotonicReads(count)
        } subject: { count in
            var total: UInt64 = 0
            for _ in 0..<count { total &+= forced.nanos() }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "clock", name: "fast clock read, fallback forced", unit: "ns/op",
                median: fallback.subject.median, p99: fallback.subject.p99, p999: fallback.subject.p999,
                baseline: "CLOCK_MONOTONIC read (same run)", baselineMedian: fallback.baseline.median,
                baselineP99: fallback.baseline.p99, ratio: fallback.subject.median / fallback.baseline.median,
                note: "span clock: \(forced.source); the disabled check is one load and a branch"))
    }

    private static func monotonicReads(_ count: Int) {
        var total: UInt64 = 0
        for _ in 0..<count { total &+= perf_monotonic_ns() }
        Bench.blackHole(total)
    }
}
