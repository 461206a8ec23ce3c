import Foundation
// The numbers a budget check reads from a performance report: per-span metrics and call sites,
// hang and ledger totals, the host. Reads the same model, as strictly, as `perf-report summary`.
import Perf

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
        let bytes = try ReportFile.read(url.path, limit: PerformanceReport.maximumFileBytes).get()
        try self.init(bytes: bytes, path: url.path)
    }

    /// Reads and validates report bytes (strictly: a value of the wrong type is an error, not a
    /// zero); `path` is used in messages.
    ///
    /// Google Benchmark JSON is read through ``init(googleBenchmark:path:)``.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
        if Self.isGoogleBenchmark(bytes) {
            self = try ReportFigures(googleBenchmark: bytes, path: path)
            return
        }
        self.init(report: try PerformanceReport(bytes: bytes, path: path), path: path)
    }

    /// The figures of a report already read.
    public init(report: PerformanceReport, path: String) {
        self.path = path
        spans = report.spans.mapValues { span in
            let count = Double(span.count)
            let overBudget = Double(span.overBudget)
            let values: [BudgetMetric: Double] = [
                .count: count, .p50: span.p50Ms, .p90: span.p90Ms, .p95: span.p95Ms, .p99: span.p99Ms,
                .max: span.maxMs, .sum: span.sumMs, .overBudget: overBudget,
                .overBudgetRate: count > 0 ? overBudget / count * 100 : 0,
            ]
            return Span(values: values, site: span.sites.first)
        }
        hangs = Budgets.hangMetrics.keys.reduce(into: [:]) { $0[$1] = Self.figure($1, of: report.hangs) }
        ledger = Budgets.ledgerMetrics.keys.reduce(into: [:]) { $0[$1] = Self.figure($1, of: report.ledger) }
        let host = report.host
        let known = [
            ("buildConfiguration", host?.buildConfiguration), ("cpuModel", host?.cpuModel),
            ("swiftVersion", host?.swiftVersion),
        ]
        environment = known.reduce(into: [:]) { result, entry in
            if let value = entry.1, !value.isEmpty { result[entry.0] = value }
        }
    }

    /// A ``Budgets/hangMetrics`` figure.
    static func figure(_ metric: String, of hangs: PerformanceReport.Hangs) -> Double {
        switch metric {
        case "count": Double(hangs.count)
        case "fatal": Double(hangs.fatal)
        case "suppressed": Double(hangs.suppressed)
        case "maxMs": hangs.maxMs
        case "totalMs": hangs.totalMs
        default: 0
        }
    }

    /// A ``Budgets/ledgerMetrics`` figure: the counters, and `events` (lines the report kept).
    static func figure(_ metric: String, of ledger: PerformanceReport.Ledger) -> Double {
        switch metric {
        case "events": Double(ledger.events.count)
        case "malformedLines": Double(ledger.malformedLines)
        case "tornTail": Double(ledger.tornTail)
        case "unknownKinds": Double(ledger.unknownKinds)
        default: 0
        }
    }
}
