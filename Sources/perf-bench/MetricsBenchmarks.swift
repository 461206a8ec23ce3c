// The `metrics` group: what one `Perf.prometheusText()` scrape costs with 100 and 1,000 span
// names, each beside `Perf.spanHistograms()` of the same runtime (the copy of the histograms
// every scrape starts from), alternating call by call so both see the same machine.
import Foundation
import Perf

enum MetricsBenchmarks {
    static let group = BenchGroup(name: "metrics") { context in try run(context) }

    private static func run(_ context: BenchContext) throws {
        Perf.shutdown()
        Perf.install(
            Perf.Configuration(
                app: Perf.AppInfo(name: "perf-bench"), recording: .disabled, spanNameCapacity: 2048))
        defer { Perf.shutdown() }
        let names = SpanMemoryBenchmarkNames.all
        guard names.count >= 1000 else { throw BenchFailure("need 1,000 span names, have \(names.count)") }
        var ended = 0
        for (count, label) in [(100, "100"), (1000, "1,000")] {
            // Every name ends under budget a few times and once over it (a 0 ms budget), so each
            // has buckets, a sum, a budget and an over-budget count to write.
            for name in names[ended..<count] {
                for _ in 0..<3 { Perf.begin(name, slowMs: 1_000).end() }
                Perf.begin(name, slowMs: 0).end()
            }
            ended = count
            scrape(context, names: count, label: label)
        }
    }

    private static func scrape(_ context: BenchContext, names: Int, label: String) {
        let calls = context.scaled(200, quick: 40)
        var text = ""
        var subject: [Double] = []
        var baseline: [Double] = []
        for call in -5..<calls {
            var start = Bench.now()
            Bench.blackHole(Perf.spanHistograms())
            let copy = Double(Bench.now() - start) / 1_000
            start = Bench.now()
            text = Perf.prometheusText()
            let scrape = Double(Bench.now() - start) / 1_000
            if call >= 0 {
                subject.append(scrape)
                baseline.append(copy)
            }
        }
        let measured = Distribution(subject)
        let copies = Distribution(baseline)
        let families = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.count
        let spans = text.split(separator: "\n").filter { $0.hasPrefix("perf_span_duration_seconds_count{") }.count
        context.add(
            BenchRow(
                group: "metrics", name: "prometheusText(), \(label) span names", unit: "µs",
                median: measured.median, p99: measured.p99, baseline: "Perf.spanHistograms() of the same runtime",
                baselineMedian: copies.median, baselineP99: copies.p99,
                ratio: measured.median / max(copies.median, 1e-9),
                // This row reports the cost, not a bound: no target, no mark (the CI gate is in
                // scripts/perf-bench-budgets.json).
                target: nil, pass: nil,
                note: "\(text.utf8.count) bytes of output (\(spans) span histograms, \(families) families); "
                    + "a scrape every 15 s at the median costs \(String(format: "%.4f", measured.median / 150_000)) % "
                    + "of a core",
                samples: calls))
    }
}
