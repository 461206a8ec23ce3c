// The rows as Google Benchmark JSON (`--gbench FILE`), the format `--benchmark_format=json`
// writes, so `compare.py` and the usual dashboards read perf-bench runs and `perf-report check`
// gates them with a budgets file.
//
// Mapping: a row is one run named `<group>/<figure>`. A time row (ns/op, ns, µs, ms, s) gives
// aggregates `median`, `p99` and `p99.9` (those the row has) with `aggregate_unit` "time";
// `cpu_time` repeats `real_time` because perf-bench measures wall time only. Its baseline, when
// in the same unit, is a run of its own, `<group>/<figure> [baseline]`. A row in any other unit
// (ops/s, GB/s, %, allocs, ×) is never written as time: it becomes one `median` entry with no
// time keys and a user counter named for the unit (`items_per_second`, `bytes_per_second`,
// `allocs_per_op`, `percent_core`, …), which compare.py skips as not comparable. The ratio to the
// baseline rides on the median entry as the counter `ratio_to_baseline`, and a time row's
// allocations per op as `allocs_per_op` (an allocation row's own value is already that counter). `repetitions` and `iterations` are the samples behind the statistics
// (1 when the row does not say).
import Foundation

enum GoogleBenchmarkWriter {
    /// Time units of rows, as Google Benchmark's `time_unit`.
    static let timeUnits: [String: String] = [
        "ns/op": "ns", "ns": "ns", "µs": "us", "µs/op": "us", "us": "us", "ms": "ms", "ms/op": "ms", "s": "s",
    ]

    /// Counters for rows in other units: the counter's name and the factor to its unit.
    static let counterUnits: [String: (name: String, scale: Double)] = [
        "ops/s": ("items_per_second", 1), "GB/s": ("bytes_per_second", 1e9), "allocs/op": ("allocs_per_op", 1),
        "allocs": ("allocs", 1), "% core": ("percent_core", 1), "%": ("percent", 1), "×": ("ratio", 1),
        "signals": ("signals_per_episode", 1),
    ]

    static func write(_ document: BenchDocument, to path: String) throws {
        let data = try JSONSerialization.data(
            withJSONObject: encode(document), options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The whole file: `context` and `benchmarks`.
    static func encode(_ document: BenchDocument) -> [String: Any] {
        var benchmarks: [[String: Any]] = []
        var family = 0
        for row in document.rows {
            let run = "\(row.group)/\(row.name)"
            let entries = entries(for: row, run: run, family: family)
            guard !entries.isEmpty else { continue }
            benchmarks += entries
            family += 1
            if let baseline = baselineEntries(for: row, run: run + " [baseline]", family: family) {
                benchmarks += baseline
                family += 1
            }
        }
        return ["context": GoogleBenchmarkContext.make(document.environment), "benchmarks": benchmarks]
    }

    /// A row's aggregates, or its one counter entry.
    static func entries(for row: BenchRow, run: String, family: Int) -> [[String: Any]] {
        var counters: [String: Double] = [:]
        if let ratio = row.ratio, ratio.isFinite { counters["ratio_to_baseline"] = ratio }
        let base = header(run: run, family: family, samples: row.samples ?? 1, threads: threads(row.name))
        if let timeUnit = timeUnits[row.unit] {
            if let allocations = row.allocationsPerOp { counters["allocs_per_op"] = allocations }
            let statistics: [(String, Double?)] = [("median", row.median), ("p99", row.p99), ("p99.9", row.p999)]
            return statistics.compactMap { aggregate, value in
                guard let value, value.isFinite else { return nil }
                var entry = timed(base, aggregate: aggregate, run: run, value: value, unit: timeUnit)
                if aggregate == "median" { for (name, value) in counters { entry[name] = value } }
                return entry
            }
        }
        let counter = counterUnits[row.unit] ?? (name: counterName(row.unit), scale: 1)
        guard row.median.isFinite else { return [] }
        var entry = base
        entry["name"] = run + "_median"
        entry["aggregate_name"] = "median"
        entry[counter.name] = row.median * counter.scale
        for (name, value) in counters where entry[name] == nil { entry[name] = value }
        return [entry]
    }

    /// The baseline's median (and p99) as a run of its own, when it is a time in the row's unit.
    static func baselineEntries(for row: BenchRow, run: String, family: Int) -> [[String: Any]]? {
        guard let timeUnit = timeUnits[row.unit], let median = row.baselineMedian, median.isFinite else { return nil }
        let base = header(run: run, family: family, samples: row.samples ?? 1, threads: threads(row.name))
        var entries = [timed(base, aggregate: "median", run: run, value: median, unit: timeUnit)]
        if let p99 = row.baselineP99, p99.isFinite {
            entries.append(timed(base, aggregate: "p99", run: run, value: p99, unit: timeUnit))
        }
        return entries
    }

    private static func header(run: String, family: Int, samples: Int, threads: Int) -> [String: Any] {
        [
            "run_name": run, "run_type": "aggregate", "family_index": family, "per_family_instance_index": 0,
            "repetitions": samples, "iterations": samples, "threads": threads,
        ]
    }

    private static func timed(
        _ base: [String: Any], aggregate: String, run: String, value: Double, unit: String
    ) -> [String: Any] {
        var entry = base
        entry["name"] = "\(run)_\(aggregate)"
        entry["aggregate_name"] = aggregate
        entry["aggregate_unit"] = "time"
        entry["real_time"] = value
        entry["cpu_time"] = value
        entry["time_unit"] = unit
        return entry
    }

    /// The thread count a figure's name states (`…, 2 threads …`), else 1.
    static func threads(_ name: String) -> Int {
        let words = name.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "(" })
        for (index, word) in words.enumerated().dropFirst() where word.hasPrefix("thread") {
            if let count = Int(words[index - 1]) { return count }
        }
        return 1
    }

    /// A unit no table knows, as a counter name: lower case, letters and digits, `_` between.
    static func counterName(_ unit: String) -> String {
        let words = unit.lowercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        return words.isEmpty ? "value" : words.joined(separator: "_")
    }
}
