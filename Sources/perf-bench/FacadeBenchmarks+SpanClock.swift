// The floor under the facade's TSC rows: what two span-clock reads and a histogram
// tick cost with no Perf code around them, against the same CLOCK_MONOTONIC read pair.
import CPerfShims
import Perf
import PerfCore

extension FacadeBenchmarks {
    /// What no span can cost less than: its two span-clock reads and one histogram tick, done bare
    /// in a loop (same run, same baseline). The distance from this row to the one above is all that
    /// Perf's own code adds (reader sections, the flight recorder, the budget check); the ratio here
    /// says whether the 0.6× goal is reachable on this machine at all.
    static func spanFloor(_ context: BenchContext, batches: Int, iterations: Int) {
        let registry = HistogramRegistry()
        let site = CallSite()
        let measured = Bench.alternating(batches: batches, iterations: iterations, baseline: Bench.clockPairs) {
            count in
            for _ in 0..<count {
                let start = perf_fast_ns()
                let end = perf_fast_ns()
                _ = registry.record("bench.floor", nanos: end &- start, site: site)
            }
        }
        let ratio = measured.subject.median / measured.baseline.median
        context.add(
            BenchRow(
                group: "facade", name: "floor: two span-clock reads + one histogram tick, no Perf code", unit: "ns/op",
                median: measured.subject.median, p99: measured.subject.p99, p999: measured.subject.p999,
                baseline: "CLOCK_MONOTONIC read pair", baselineMedian: measured.baseline.median,
                baselineP99: measured.baseline.p99, ratio: ratio, target: nil, pass: nil, allocationsPerOp: nil,
                note: "span clock: \(SpanClock.shared.source); what the TSC rows above cannot go below",
                samples: batches))
    }
}
