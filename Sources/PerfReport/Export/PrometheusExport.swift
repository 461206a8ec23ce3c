// A report as Prometheus metrics for node_exporter's textfile collector: span and hang latency
// histograms, budget breaches, hang totals, sessions, memory, and the app's identity.
import Perf
import PerfCore

/// Renders a report as Prometheus text exposition (format 0.0.4) for node_exporter's
/// textfile collector.
///
/// Families: `perf_span_duration_seconds` (histogram per `span`, from the report's latency
/// histograms), `perf_span_over_budget_total`, `perf_span_budget_seconds`,
/// `perf_hangs_total`, `perf_hangs_fatal_total`, `perf_hangs_suppressed_total`,
/// `perf_hang_duration_seconds` (histogram per watchdog `target`), `perf_sessions` (by
/// `status`), `perf_process_resident_memory_bytes` (the newest sample),
/// `perf_report_generated_timestamp_seconds` and `perf_app_info` (value 1). Every series
/// carries an `app` label, so two programs' files in one textfile directory never collide.
///
/// Buckets are fixed (0.5 ms to 60 s, then `+Inf`) so series from every machine aggregate.
/// There are no timestamps: the collector rejects a file that has one.
///
/// ```swift
/// let metrics = PrometheusExport.render(try ExportInput(contentsOf: reportURL))
/// // write to /var/lib/prometheus/node-exporter/myservice.prom via a temporary file + rename
/// ```
///
/// - Note: A span whose report entry comes from the ledger alone (`"source":"ledger"`) has
///   no duration histogram here: the ledger keeps only the slow ends, which are not the
///   span's distribution. Its budget breaches are still counted.
public enum PrometheusExport {
    /// Bucket upper bounds: as written in `le`, and in seconds.
    static let bounds: [(text: String, seconds: Double)] = [
        "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5",
        "10", "30", "60",
    ].map { ($0, Double($0)!) }

    /// Session statuses always exported (0 when none), so the series exist before the first crash.
    static let statuses = [PerformanceReport.Session.Status.active, .crashed, .terminated].map(\.rawValue)

    /// The exposition's bytes.
    public static func render(_ input: ExportInput) -> [UInt8] {
        let app = ("app", input.app.name)
        var text = PrometheusText()
        text.family(
            "perf_app_info", type: "gauge", help: "The instrumented program's name, version and build; always 1."
        ) {
            $0.sample(
                [app, ("build", input.app.build), ("name", input.app.name), ("version", input.app.version)],
                .integer(1))
        }
        text.family(
            "perf_report_generated_timestamp_seconds", type: "gauge",
            help: "When the report's newest record was written, in Unix seconds."
        ) { family in
            if input.generatedAtUnixNanos > 0 {
                // Milliseconds over 1000, not nanoseconds over 1e9: exact to the millisecond it was written in.
                family.sample([app], .double(Double(input.generatedAtUnixNanos / 1_000_000) / 1_000))
            }
        }
        sessionFamilies(input, app: app, into: &text)
        spanFamilies(input, app: app, into: &text)
        hangFamilies(input, app: app, into: &text)
        text.family(
            "perf_process_resident_memory_bytes", type: "gauge",
            help: "Resident memory of the newest diagnostic snapshot, in bytes."
        ) { family in
            if let newest = input.processSamples.last {
                family.sample([app], .integer(UInt64(clamping: newest.rssBytes)))
            }
        }
        return text.bytes
    }

    static func sessionFamilies(_ input: ExportInput, app: PrometheusText.Label, into text: inout PrometheusText) {
        var counts = Dictionary(uniqueKeysWithValues: statuses.map { ($0, UInt64(0)) })
        for session in input.sessions { counts[session.status.rawValue, default: 0] += 1 }
        text.family("perf_sessions", type: "gauge", help: "Sessions (process runs) in the report, by status.") {
            family in
            for (status, count) in counts.sorted(by: { $0.key < $1.key }) {
                family.sample([app, ("status", status)], .integer(count))
            }
        }
    }

    static func spanFamilies(_ input: ExportInput, app: PrometheusText.Label, into text: inout PrometheusText) {
        text.family(
            "perf_span_duration_seconds", type: "histogram",
            help: "Span durations from Perf's latency histograms (every call, not only slow ones)."
        ) { family in
            for span in input.spans where span.source == .histogram {
                guard let histogram = span.histogram else { continue }
                family.histogram([app, ("span", span.name)], histogram)
            }
        }
        text.family(
            "perf_span_over_budget_total", type: "counter",
            help: "Span ends over their budget recorded in the ledger."
        ) { family in
            for span in input.spans {
                family.sample([app, ("span", span.name)], .integer(UInt64(clamping: span.overBudget)))
            }
        }
        text.family("perf_span_budget_seconds", type: "gauge", help: "The budget a span runs under, in seconds.") {
            family in
            for span in input.spans {
                guard let budget = span.budgetMs else { continue }
                family.sample([app, ("span", span.name)], .double(budget / 1_000))
            }
        }
    }

    static func hangFamilies(_ input: ExportInput, app: PrometheusText.Label, into text: inout PrometheusText) {
        let totals: [(String, String, Int64)] = [
            ("perf_hangs_total", "Hangs the watchdog reported (not hitches).", input.hangs.count),
            ("perf_hangs_fatal_total", "Hangs the process died in.", input.hangs.fatal),
            (
                "perf_hangs_suppressed_total", "Slow episodes not blamed (paused, stalled host, debugger).",
                input.hangs.suppressed
            ),
        ]
        for (name, help, value) in totals {
            text.family(name, type: "counter", help: help) { $0.sample([app], .integer(UInt64(clamping: value))) }
        }
        text.family(
            "perf_hang_duration_seconds", type: "histogram",
            help: "Hang and hitch durations per watchdog target."
        ) { family in
            for (target, histogram) in input.hangs.targets.sorted(by: { $0.key < $1.key }) {
                family.histogram([app, ("target", target)], histogram)
            }
        }
    }
}

extension PrometheusText.Family {
    /// A latency histogram's cumulative buckets, in seconds.
    mutating func histogram(_ labels: [PrometheusText.Label], _ histogram: LatencyHistogram) {
        self.histogram(
            labels, bounds: PrometheusExport.bounds,
            cumulativeCount: { histogram.count(atOrBelowNanos: UInt64(($0 * 1e9).rounded())) }, count: histogram.count,
            sumSeconds: Double(histogram.sumNanos) / 1e9)
    }
}
