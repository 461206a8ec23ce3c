// The numbers a budget check reads from a performance report: per-span metrics and call sites,
// hang and ledger totals, the host. Reads through the same validation as `perf-report summary`.
import Perf
import Foundation

/// The figures of one report (or of several, aggregated) that budgets are checked against.
public struct ReportFigures: Sendable, Equatable {
    /// One span's metrics.
    public struct Span: Sendable, Equatable {
        /// Values by metric, in the metric's unit.
        public var values: [BudgetMetric: Double]
        /// The first call site (`Module/File.swift:88`), when the report knows one.
        public var site: String?

        /// Creates a span's figures.
        public init(values: [BudgetMetric: Double], site: String? = nil) {
            self.values = values
            self.site = site
        }

        /// Calls counted: the sample size of every statistic.
        public var count: Int64 { Int64(clamping: Int(Swift.max(Swift.min(values[.count] ?? 0, 9e18), 0))) }
    }

    /// The report's file (several joined with `+` when aggregated), for messages.
    public var path: String
    /// Spans by name.
    public var spans: [String: Span]
    /// The report's `hangs` totals (keys of ``Budgets/hangMetrics``).
    public var hangs: [String: Double]
    /// The report's `ledger` counts (keys of ``Budgets/ledgerMetrics``).
    public var ledger: [String: Double]
    /// `cpuModel`, `swiftVersion`, `buildConfiguration` from the report's `host`.
    public var environment: [String: String]

    /// Creates figures in code.
    public init(
        path: String, spans: [String: Span], hangs: [String: Double] = [:], ledger: [String: Double] = [:],
        environment: [String: String] = [:]
    ) {
        self.path = path
        self.spans = spans
        self.hangs = hangs
        self.ledger = ledger
        self.environment = environment
    }

    /// The host keys whose difference makes timings incomparable.
    public static let environmentKeys = ["buildConfiguration", "cpuModel", "swiftVersion"]

    /// Reads and validates the report at `url`.
    ///
    /// - Throws: ``ReportError`` naming the file, as ``ReportSummary`` does.
    public init(contentsOf url: URL) throws(Perf.ReportError) {
        let bytes = try ReportFile.read(url.path, limit: 64 << 20).get()
        try self.init(bytes: bytes, path: url.path)
    }

    /// Reads and validates report bytes; `path` is used in messages.
    ///
    /// Google Benchmark JSON is read through ``init(googleBenchmark:path:)``.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
        if let benchmarks = Self.googleBenchmarkObject(bytes) {
            self = try ReportFigures(googleBenchmark: benchmarks, path: path)
            return
        }
        let object = try ReportDocument.validate(bytes: bytes, path: path)
        self.path = path
        var spans: [String: Span] = [:]
        for case let (name, value as [String: Any]) in object["spans"] as? [String: Any] ?? [:] {
            let count = ReportDocument.double(value["count"])
            let overBudget = ReportDocument.double(value["overBudget"])
            let values: [BudgetMetric: Double] = [
                .count: count, .p50: ReportDocument.double(value["p50Ms"]),
                .p90: ReportDocument.double(value["p90Ms"]), .p95: ReportDocument.double(value["p95Ms"]),
                .p99: ReportDocument.double(value["p99Ms"]), .max: ReportDocument.double(value["max"]),
                .sum: ReportDocument.double(value["sum"]), .overBudget: overBudget,
                .overBudgetRate: count > 0 ? overBudget / count * 100 : 0,
            ]
            spans[name] = Span(values: values, site: (value["sites"] as? [Any])?.first as? String)
        }
        self.spans = spans
        let hangs = object["hangs"] as? [String: Any] ?? [:]
        self.hangs = Budgets.hangMetrics.keys.reduce(into: [:]) { $0[$1] = ReportDocument.double(hangs[$1]) }
        let ledger = object["ledger"] as? [String: Any] ?? [:]
        var ledgerCounts = Budgets.ledgerMetrics.keys.reduce(into: [String: Double]()) {
            $0[$1] = ReportDocument.double(ledger[$1])
        }
        ledgerCounts["events"] = Double((ledger["events"] as? [Any])?.count ?? 0)
        self.ledger = ledgerCounts
        let host = object["host"] as? [String: Any] ?? [:]
        environment = Self.environmentKeys.reduce(into: [:]) { result, key in
            if let value = host[key] as? String { result[key] = value }
        }
    }
}
