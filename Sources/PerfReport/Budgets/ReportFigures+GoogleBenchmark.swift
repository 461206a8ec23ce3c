// Google Benchmark JSON (`--benchmark_format=json`, `perf-bench --gbench`) read as report figures,
// so `perf-report check` and `compare` gate benchmark runs with the same budgets file as reports.
import Perf
import Foundation

extension ReportFigures {
    /// Reads a Google Benchmark JSON file (the format `--benchmark_format=json` and
    /// `perf-bench --gbench` write) as report figures.
    ///
    /// A file is taken for Google Benchmark output when its top-level object has both a
    /// `benchmarks` and a `context` key. The mapping:
    ///
    /// - Every benchmark run becomes a span named by its `run_name` (its `name` when there is no
    ///   `run_name`): `BM_Foo/8` for the entries `BM_Foo/8_median`, `BM_Foo/8_p99`, ….
    /// - Aggregates with `aggregate_unit` `"time"` (or none) give the percentiles, from
    ///   `real_time` converted from `time_unit` (`ns`, `us`, `ms`, `s`) to milliseconds:
    ///   `median` and `p50` → `p50`; `p90`, `p95`, `p99` → the same; `max` → `max`. Other
    ///   aggregates (`mean`, `stddev`, `cv`, `p99.9`, complexity fits) have no budget metric and
    ///   are ignored; so is `cpu_time`.
    /// - The run's own entries (`run_type` `"iteration"`, one per repetition) stand in for what
    ///   the aggregates do not give: `p50` is the median and `max` the largest of their
    ///   `real_time`s.
    /// - `count` is the number of samples behind the statistics: the aggregates' `repetitions`
    ///   (their `iterations` when absent), else the number of iteration entries. There is no
    ///   `sum`: the file does not say how many calls each repetition timed.
    /// - Every user counter (a numeric key outside Google Benchmark's own, e.g.
    ///   `items_per_second` or perf-bench's `allocs_per_op`) of the median aggregate (else of the
    ///   run's first entry that has counters) becomes a span `<run>/<counter>` whose `count` is the
    ///   counter's value, so a `count` limit bounds it: `{"match": "*/allocs_per_op",
    ///   "limits": {"count": {"max": 0}}}`.
    /// - Runs with `error_occurred` are left out: a budgeted one is then reported missing.
    /// - A metric the file does not give is absent from the span, and a limit on it reads 0: limit
    ///   only the statistics the benchmarks emit.
    /// - `context.library_build_type` becomes the `buildConfiguration` of the environment,
    ///   `host_name` stands where reports have a `cpuModel` unless the context has `cpu_model`.
    ///   There are no hangs and no ledger.
    ///
    /// - Throws: ``Perf/ReportError`` with code `invalidReport` naming the file and the entry at
    ///   fault when the structure is not Google Benchmark's.
    public init(googleBenchmark object: [String: Any], path: String) throws(Perf.ReportError) {
        guard let entries = object["benchmarks"] as? [Any] else {
            throw Self.invalid(path, "\"benchmarks\" is not an array")
        }
        guard let context = object["context"] as? [String: Any] else {
            throw Self.invalid(path, "\"context\" is not an object")
        }
        var runs: [String: GoogleBenchmarkRun] = [:]
        for (index, value) in entries.enumerated() {
            guard let entry = value as? [String: Any] else {
                throw Self.invalid(path, "benchmarks[\(index)] is not an object")
            }
            guard let name = entry["name"] as? String, !name.isEmpty else {
                throw Self.invalid(path, "benchmarks[\(index)] has no \"name\"")
            }
            if entry["error_occurred"] as? Bool == true { continue }
            let runName = entry["run_name"] as? String ?? name
            let time = try Self.milliseconds(entry, index: index, path: path)
            runs[runName, default: GoogleBenchmarkRun()].add(entry, timeMs: time)
        }
        var spans: [String: Span] = [:]
        for (name, run) in runs {
            spans[name] = Span(values: run.values)
            for (counter, value) in run.counters {
                spans[name + "/" + counter] = Span(values: [.count: value])
            }
        }
        self.init(
            path: path, spans: spans,
            environment: Self.googleBenchmarkEnvironment(context))
    }

    /// Whether a parsed JSON object is Google Benchmark output rather than a performance report.
    static func isGoogleBenchmark(_ object: [String: Any]) -> Bool {
        object["benchmarks"] != nil && object["context"] != nil && object["schema"] == nil
    }

    /// The object of `bytes` when they look like Google Benchmark output; nil (without parsing
    /// a large report twice) when they do not mention a `benchmarks` key at all.
    static func googleBenchmarkObject(_ bytes: [UInt8]) -> [String: Any]? {
        let found = bytes.firstRange(of: Array(#""benchmarks""#.utf8)) != nil
        guard found,
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
            isGoogleBenchmark(object)
        else { return nil }
        return object
    }

    /// An entry's `real_time` in milliseconds, nil when the entry carries no time (a
    /// counter-only entry, or an aggregate in another unit such as `cv`'s percentage).
    private static func milliseconds(
        _ entry: [String: Any], index: Int, path: String
    ) throws(Perf.ReportError) -> Double? {
        if let unit = entry["aggregate_unit"], unit as? String != "time" { return nil }
        guard let raw = entry["real_time"] else { return nil }
        guard let value = ReportDocument.number(raw), value >= 0 else {
            throw invalid(path, "benchmarks[\(index)].real_time is not a non-negative number")
        }
        let unit = entry["time_unit"] as? String ?? "ns"
        guard let scale = googleBenchmarkTimeUnits[unit] else {
            throw invalid(path, "benchmarks[\(index)].time_unit '\(unit)' is not ns, us, ms or s")
        }
        return value * scale
    }

    /// Milliseconds per unit of Google Benchmark's `time_unit`.
    static let googleBenchmarkTimeUnits: [String: Double] = ["ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3]

    private static func googleBenchmarkEnvironment(_ context: [String: Any]) -> [String: String] {
        var environment: [String: String] = [:]
        if let build = context["library_build_type"] as? String { environment["buildConfiguration"] = build }
        if let cpu = context["cpu_model"] as? String ?? context["host_name"] as? String {
            environment["cpuModel"] = cpu
        }
        if let swift = context["swift_version"] as? String { environment["swiftVersion"] = swift }
        return environment
    }

    private static func invalid(_ path: String, _ problem: String) -> Perf.ReportError {
        Perf.ReportError(.invalidReport, path: path, "not valid Google Benchmark JSON: \(problem)")
    }
}

/// The entries of one benchmark run, folded into budget metrics.
private struct GoogleBenchmarkRun {
    /// Google Benchmark's own keys; any other numeric key is a user counter.
    static let standardKeys: Set<String> = [
        "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
        "repetition_index", "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time",
        "time_unit", "error_occurred", "error_message", "label", "big_o", "cpu_coefficient", "real_coefficient",
        "rms",
    ]
    static let aggregateMetrics: [String: BudgetMetric] = [
        "median": .p50, "p50": .p50, "p90": .p90, "p95": .p95, "p99": .p99, "max": .max,
    ]

    var aggregates: [BudgetMetric: Double] = [:]
    var aggregateSamples: Double?
    var iterationTimes: [Double] = []
    var iterationEntries = 0
    var counters: [String: Double] = [:]
    var countersFromMedian = false

    mutating func add(_ entry: [String: Any], timeMs: Double?) {
        let isAggregate = entry["run_type"] as? String == "aggregate"
        let aggregate = entry["aggregate_name"] as? String ?? ""
        if isAggregate {
            let samples =
                entry["repetitions"].flatMap(ReportDocument.number)
                ?? entry["iterations"].flatMap(ReportDocument.number)
            if let samples, samples >= 0 { aggregateSamples = max(aggregateSamples ?? 0, samples) }
            if let timeMs, let metric = Self.aggregateMetrics[aggregate] { aggregates[metric] = timeMs }
        } else {
            iterationEntries += 1
            if let timeMs { iterationTimes.append(timeMs) }
        }
        let isMedian = isAggregate && (aggregate == "median" || aggregate == "p50")
        guard isMedian || (counters.isEmpty && !countersFromMedian) else { return }
        var found: [String: Double] = [:]
        for (key, value) in entry where !Self.standardKeys.contains(key) {
            if let number = ReportDocument.number(value) { found[key] = number }
        }
        if isMedian || !found.isEmpty {
            counters = found
            countersFromMedian = isMedian
        }
    }

    var values: [BudgetMetric: Double] {
        var values = aggregates
        let sorted = iterationTimes.sorted()
        if values[.p50] == nil, !sorted.isEmpty {
            let middle = sorted.count / 2
            values[.p50] = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
        if values[.max] == nil, let largest = sorted.last { values[.max] = largest }
        values[.count] = aggregateSamples ?? Double(iterationEntries)
        return values
    }
}
