// The span_end USDT probe's cost when nobody listens: the scoped hot path with the probe compiled
// in (its semaphore load and untaken branch, as every program has it) against the same code with
// the probe compiled out (SpanRecorder.end(probes: false), the branch removed at compile time),
// alternated batch by batch in the same run.
import CPerfShims
import PerfCore

extension SpanBenchmarks {
    static let probesInRow = "scoped begin+end, probes compiled in (no tracer)"

    static func probeRows(_ context: BenchContext, batches: Int, iterations: Int) {
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: RecordPipeline(), flightRecorder: FlightRecorder(capacity: 4096)!
        )
        let site = CallSite()
        let budget: UInt64 = 1_000_000_000
        let measured = Bench.alternating(batches: batches, iterations: iterations) { count in
            for _ in 0..<count {
                let token = recorder.begin("bench.probe", budgetNanos: budget, site: site)
                recorder.end(token, exit: .success, reason: nil, detail: nil, count: nil, probes: false)
            }
        } subject: { count in
            for _ in 0..<count {
                recorder.end(recorder.begin("bench.probe", budgetNanos: budget, site: site))
            }
        }
        let allocations = Bench.allocationsPerOp(iterations: 10_000) {
            recorder.end(recorder.begin("bench.probe", budgetNanos: budget, site: site))
        }
        let difference = measured.subject.median - measured.baseline.median
        let within = difference <= max(1.0, 0.02 * measured.baseline.median)
        context.add(
            BenchRow(
                group: "span", name: probesInRow, unit: "ns/op", median: measured.subject.median,
                p99: measured.subject.p99, p999: measured.subject.p999,
                baseline: "the same begin+end, probe compiled out (end(probes: false), same run)",
                baselineMedian: measured.baseline.median, baselineP99: measured.baseline.p99,
                ratio: measured.subject.median / measured.baseline.median,
                target: "≤ compiled out + 2 % (or + 1 ns)", pass: within && allocations == 0,
                allocationsPerOp: allocations,
                note: String(format: "difference %+.2f ns/op; ", difference)
                    + (perf_probes_compiled() == 1 ? "probe compiled in" : "probes are not compiled on this platform")))
    }
}
