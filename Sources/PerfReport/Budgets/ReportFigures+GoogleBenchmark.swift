import Foundation
// Google Benchmark JSON (`--benchmark_format=json`, `perf-bench --gbench`) read as report figures,
// so `perf-report check` and `compare` gate benchmark runs with the same budgets file as reports.
import Perf
import PerfCore

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
    public init(googleBenchmark bytes: [UInt8], path: String) throws(Perf.ReportError) {
        do {
            _ = try JSONScanner(bytes)
        } catch {
            throw Self.invalid(path, error.notJSON)
        }
        let file: GoogleBenchmarkFile
        do {
            file = try JSONDecoder().decode(GoogleBenchmarkFile.self, from: Data(bytes))
        } catch let problem as GoogleBenchmarkFile.Problem {
            throw Self.invalid(path, problem.message)
        } catch {
            throw Self.invalid(path, "not valid JSON (truncated or corrupt)")
        }
        var runs: [String: GoogleBenchmarkRun] = [:]
        for entry in file.benchmarks where !entry.errorOccurred {
            runs[entry.runName ?? entry.name, default: GoogleBenchmarkRun()].add(entry)
        }
        var spans: [String: Span] = [:]
        for (name, run) in runs {
            spans[name] = Span(values: run.values)
            for (counter, value) in run.counters {
                spans[name + "/" + counter] = Span(values: [.count: value])
            }
        }
        self.init(path: path, spans: spans, environment: file.context.environment)
    }

    /// Reads the Google Benchmark JSON file at `url`, as ``init(googleBenchmark:path:)``.
    public init(googleBenchmarkContentsOf url: URL) throws(Perf.ReportError) {
        let bytes = try ReportFile.read(url.path, limit: PerformanceReport.maximumFileBytes).get()
        try self.init(googleBenchmark: bytes, path: url.path)
    }

    /// Whether `bytes` are Google Benchmark output rather than a performance report: a top-level
    /// object with `benchmarks` and `context` and no `schema`. Bytes that never mention a
    /// `benchmarks` key (every report) are not parsed.
    static func isGoogleBenchmark(_ bytes: [UInt8]) -> Bool {
        guard bytes.firstRange(of: Array(#""benchmarks""#.utf8)) != nil else { return false }
        return (try? JSONDecoder().decode(GoogleBenchmarkFile.Shape.self, from: Data(bytes)))?.isGoogleBenchmark == true
    }

    /// Milliseconds per unit of Google Benchmark's `time_unit`.
    static let googleBenchmarkTimeUnits: [String: Double] = ["ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3]

    private static func invalid(_ path: String, _ problem: String) -> Perf.ReportError {
        Perf.ReportError(.invalidReport, path: path, "not valid Google Benchmark JSON: \(problem)")
    }
}

/// Google Benchmark's JSON output, typed as far as report figures read it. Its own keys are
/// typed loosely where the format is (a missing `run_name`, a `time_unit` that is not a string);
/// what the figures rest on (an entry's `name`, `real_time`, `time_unit`) is checked, and the
/// first problem is thrown as a ``Problem`` naming the entry.
struct GoogleBenchmarkFile: Decodable {
    /// Why a file is not Google Benchmark output, in words.
    struct Problem: Error {
        var message: String
    }

    /// Just enough to tell Google Benchmark output from a report.
    struct Shape: Decodable {
        var isGoogleBenchmark: Bool

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: ReportKey.self)
            isGoogleBenchmark =
                container.contains(ReportKey("benchmarks")) && container.contains(ReportKey("context"))
                && !container.contains(ReportKey("schema"))
        }
    }

    /// The machine and build the benchmarks ran on.
    struct Context: Decodable {
        /// `buildConfiguration`, `cpuModel` and `swiftVersion`, where the context has them:
        /// `library_build_type`, `cpu_model` (else `host_name`), `swift_version`.
        var environment: [String: String] = [:]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: ReportKey.self)
            func string(_ key: String) -> String? { try? container.decode(String.self, forKey: ReportKey(key)) }
            if let build = string("library_build_type") { environment["buildConfiguration"] = build }
            if let cpu = string("cpu_model") ?? string("host_name") { environment["cpuModel"] = cpu }
            if let swift = string("swift_version") { environment["swiftVersion"] = swift }
        }
    }

    /// One entry of `benchmarks`: an iteration run or an aggregate.
    struct Entry {
        /// Google Benchmark's own keys; any other numeric key is a user counter.
        static let standardKeys: Set<String> = [
            "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
            "repetition_index", "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time",
            "cpu_time", "time_unit", "error_occurred", "error_message", "label", "big_o", "cpu_coefficient",
            "real_coefficient", "rms",
        ]

        var name: String
        var runName: String?
        var isAggregate: Bool
        var aggregateName: String
        /// `real_time` in milliseconds; `nil` for an entry without one, or an aggregate in
        /// another unit (`cv`'s percentage).
        var timeMs: Double?
        var errorOccurred: Bool
        /// The aggregates' `repetitions` (their `iterations` when absent).
        var samples: Double?
        var counters: [String: Double]

        /// Reads entry `index`.
        init(_ decoder: any Decoder, index: Int) throws {
            guard let container = try? decoder.container(keyedBy: ReportKey.self) else {
                throw Problem(message: "benchmarks[\(index)] is not an object")
            }
            func value<T: Decodable>(_ key: String, _ type: T.Type = T.self) -> T? {
                try? container.decode(T.self, forKey: ReportKey(key))
            }
            guard let name = value("name", String.self), !name.isEmpty else {
                throw Problem(message: "benchmarks[\(index)] has no \"name\"")
            }
            self.name = name
            runName = value("run_name")
            isAggregate = value("run_type", String.self) == "aggregate"
            aggregateName = value("aggregate_name") ?? ""
            errorOccurred = value("error_occurred", Bool.self) == true
            samples = value("repetitions", Double.self) ?? value("iterations", Double.self)
            counters = [:]
            for key in container.allKeys where !Self.standardKeys.contains(key.stringValue) {
                if let number = value(key.stringValue, Double.self) { counters[key.stringValue] = number }
            }
            timeMs = nil
            guard !errorOccurred else { return }
            if container.contains(ReportKey("aggregate_unit")), value("aggregate_unit", String.self) != "time" {
                return
            }
            guard container.contains(ReportKey("real_time")) else { return }
            guard let time = value("real_time", Double.self), time >= 0 else {
                throw Problem(message: "benchmarks[\(index)].real_time is not a non-negative number")
            }
            let unit = value("time_unit", String.self) ?? "ns"
            guard let scale = ReportFigures.googleBenchmarkTimeUnits[unit] else {
                throw Problem(message: "benchmarks[\(index)].time_unit '\(unit)' is not ns, us, ms or s")
            }
            timeMs = time * scale
        }
    }

    var context: Context
    var benchmarks: [Entry]

    init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: ReportKey.self) else {
            throw Problem(message: "the top level is not an object")
        }
        guard var entries = try? container.nestedUnkeyedContainer(forKey: ReportKey("benchmarks")) else {
            throw Problem(message: "\"benchmarks\" is not an array")
        }
        guard let context = try? container.decode(Context.self, forKey: ReportKey("context")) else {
            throw Problem(message: "\"context\" is not an object")
        }
        self.context = context
        benchmarks = []
        while !entries.isAtEnd {
            benchmarks.append(try Entry(try entries.superDecoder(), index: benchmarks.count))
        }
    }
}

/// The entries of one benchmark run, folded into budget metrics.
private struct GoogleBenchmarkRun {
    static let aggregateMetrics: [String: BudgetMetric] = [
        "median": .p50, "p50": .p50, "p90": .p90, "p95": .p95, "p99": .p99, "max": .max,
    ]

    var aggregates: [BudgetMetric: Double] = [:]
    var aggregateSamples: Double?
    var iterationTimes: [Double] = []
    var iterationEntries = 0
    var counters: [String: Double] = [:]
    var countersFromMedian = false

    mutating func add(_ entry: GoogleBenchmarkFile.Entry) {
        if entry.isAggregate {
            if let samples = entry.samples, samples >= 0 { aggregateSamples = max(aggregateSamples ?? 0, samples) }
            if let timeMs = entry.timeMs, let metric = Self.aggregateMetrics[entry.aggregateName] {
                aggregates[metric] = timeMs
            }
        } else {
            iterationEntries += 1
            if let timeMs = entry.timeMs { iterationTimes.append(timeMs) }
        }
        let isMedian = entry.isAggregate && (entry.aggregateName == "median" || entry.aggregateName == "p50")
        guard isMedian || (counters.isEmpty && !countersFromMedian) else { return }
        if isMedian || !entry.counters.isEmpty {
            counters = entry.counters
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
