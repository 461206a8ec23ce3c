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
/// There are no timestamps: the collector rejects a file that has one. `Perf.prometheusText()`
/// writes the same families, from the same code, for a running process.
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
    /// The exposition's bytes.
    public static func render(_ input: ExportInput) -> [UInt8] { metrics(input).render() }

    /// The report's figures in the model `Perf.prometheusText()` renders too, so both write the
    /// same families.
    static func metrics(_ input: ExportInput) -> PrometheusMetrics {
        var metrics = PrometheusMetrics(source: .report, app: input.app)
        metrics.generatedAtUnixNanos = input.generatedAtUnixNanos
        for session in input.sessions { metrics.sessions[session.status.rawValue, default: 0] += 1 }
        metrics.spans = input.spans.map { span in
            var figures = PrometheusMetrics.Span(
                name: span.name, histogram: span.source == .histogram ? span.histogram : nil,
                overBudget: UInt64(clamping: span.overBudget), budgetSeconds: span.budgetMs.map { $0 / 1_000 })
            figures.exits = span.exits.mapValues { UInt64(clamping: $0) }
            return figures
        }
        metrics.hangs = UInt64(clamping: input.hangs.count)
        metrics.fatalHangs = UInt64(clamping: input.hangs.fatal)
        metrics.suppressedHangs = UInt64(clamping: input.hangs.suppressed)
        metrics.hangTargets = input.hangs.targets
        metrics.residentMemoryBytes = input.processSamples.last.map { UInt64(clamping: $0.rssBytes) }
        metrics.droppedLines = input.droppedLines.mapValues { UInt64(clamping: $0) }
        metrics.droppedSpanRecords = UInt64(clamping: input.droppedSpanRecords)
        metrics.droppedProfiles = UInt64(clamping: input.droppedSpanProfiles)
        return metrics
    }
}
