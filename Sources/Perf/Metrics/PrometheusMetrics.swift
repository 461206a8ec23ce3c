// The metric families Perf exposes to Prometheus, written once for both sources: a report
// (`perf-report export --format prometheus`, in PerfReport) and the running process
// (`Perf.prometheusText()`). Each source fills this neutral model; the families, label names,
// buckets and order come from here only.
import PerfCore

/// The figures behind Perf's Prometheus families, and their rendering.
package struct PrometheusMetrics {
    /// Where the figures come from: a few HELP texts say so.
    package enum Source {
        /// A performance report, read after the fact.
        case report
        /// The running process, now.
        case live
    }

    /// One span name's figures.
    package struct Span {
        package var name: String
        /// Every call's duration, when known (a span known only from the ledger has none).
        package var histogram: LatencyHistogram?
        /// Ends over budget.
        package var overBudget: UInt64
        /// The budget in seconds, when known.
        package var budgetSeconds: Double?
        /// Ends by exit other than `success` (`failure`, `cancelled`, `superseded`, `expired`).
        package var exits: [String: UInt64] = [:]

        package init(name: String, histogram: LatencyHistogram?, overBudget: UInt64, budgetSeconds: Double?) {
            self.name = name
            self.histogram = histogram
            self.overBudget = overBudget
            self.budgetSeconds = budgetSeconds
        }
    }

    /// Session statuses always written (0 when none), so the series exist before the first crash.
    package static let statuses = [ReportBuilder.SessionStatus.active, .crashed, .terminated].map(\.rawValue)

    package var source: Source
    package var app: Perf.AppInfo
    /// When the report's newest record was written, Unix nanoseconds; 0 writes no such family.
    package var generatedAtUnixNanos: Int64 = 0
    /// Sessions by status; ``statuses`` are written even when absent.
    package var sessions: [String: UInt64] = [:]
    /// Span figures, written in this order.
    package var spans: [Span] = []
    /// Hangs (not hitches), those the process died in, and episodes not blamed.
    package var hangs: UInt64 = 0, fatalHangs: UInt64 = 0, suppressedHangs: UInt64 = 0
    /// Hang and hitch durations per watchdog target.
    package var hangTargets: [String: LatencyHistogram] = [:]
    /// Resident memory in bytes, when known.
    package var residentMemoryBytes: UInt64?
    /// Ledger lines lost before they were written, by cause; ``lossCauses`` are written even when 0.
    package var droppedLines: [String: UInt64] = [:]
    /// Span ends span memory had no room for.
    package var droppedSpanRecords: UInt64 = 0
    /// Over-budget spans the span sampler found no profile slot for (their lines have no
    /// `profile`).
    package var droppedProfiles: UInt64 = 0

    /// The causes of lost ledger lines, always written (0 when none) so the series exist before
    /// the first loss.
    package static let lossCauses = ["backlog", "write"]

    package init(source: Source, app: Perf.AppInfo) {
        self.source = source
        self.app = app
    }

    /// The text exposition (format 0.0.4): every series labelled `app`, no timestamps.
    package func render() -> [UInt8] {
        let app = ("app", self.app.name)
        var text = PrometheusText()
        text.family(
            "perf_app_info", type: "gauge", help: "The instrumented program's name, version and build; always 1."
        ) {
            $0.sample(
                [app, ("build", self.app.build), ("name", self.app.name), ("version", self.app.version)],
                .integer(1))
        }
        text.family(
            "perf_report_generated_timestamp_seconds", type: "gauge",
            help: "When the report's newest record was written, in Unix seconds."
        ) { family in
            if generatedAtUnixNanos > 0 {
                // Milliseconds over 1000, not nanoseconds over 1e9: exact to the millisecond it was written in.
                family.sample([app], .double(Double(generatedAtUnixNanos / 1_000_000) / 1_000))
            }
        }
        var counts = Dictionary(uniqueKeysWithValues: Self.statuses.map { ($0, UInt64(0)) })
        counts.merge(sessions, uniquingKeysWith: +)
        let known = source == .report ? "in the report" : "this process knows of"
        text.family("perf_sessions", type: "gauge", help: "Sessions (process runs) \(known), by status.") { family in
            for (status, count) in counts.sorted(by: { $0.key < $1.key }) {
                family.sample([app, ("status", status)], .integer(count))
            }
        }
        spanFamilies(app: app, into: &text)
        hangFamilies(app: app, into: &text)
        text.family(
            "perf_ledger_dropped_lines_total", type: "counter",
            help:
                "Ledger lines lost before they were written, by cause: backlog (full while another thread wrote), write (the write failed)."
        ) { family in
            let causes = droppedLines.merging(Self.lossCauses.map { ($0, 0) }, uniquingKeysWith: +)
            for (cause, count) in causes.sorted(by: { $0.key < $1.key }) {
                family.sample([app, ("cause", cause)], .integer(count))
            }
        }
        text.family(
            "perf_dropped_span_records_total", type: "counter",
            help: "Span ends span memory had no room for (names past spanNameCapacity, or spanMemoryBytes used up)."
        ) { $0.sample([app], .integer(droppedSpanRecords)) }
        text.family(
            "perf_dropped_span_profiles_total", type: "counter",
            help: "Over-budget spans the span sampler had no profile slot for (64 open at once): not sampled."
        ) { $0.sample([app], .integer(droppedProfiles)) }
        text.family(
            "perf_process_resident_memory_bytes", type: "gauge",
            help: source == .report
                ? "Resident memory of the newest diagnostic snapshot, in bytes." : "Resident memory now, in bytes."
        ) { family in
            if let residentMemoryBytes { family.sample([app], .integer(residentMemoryBytes)) }
        }
        return text.bytes
    }

    private func spanFamilies(app: PrometheusText.Label, into text: inout PrometheusText) {
        text.family(
            "perf_span_duration_seconds", type: "histogram",
            help: "Span durations from Perf's latency histograms (every call, not only slow ones)."
        ) { family in
            for span in spans {
                guard let histogram = span.histogram else { continue }
                family.histogram([app, ("span", span.name)], histogram)
            }
        }
        text.family(
            "perf_span_over_budget_total", type: "counter",
            help: source == .report
                ? "Span ends over their budget, counted in span memory (else ledger lines)."
                : "Span ends over their budget in this session."
        ) { family in
            for span in spans { family.sample([app, ("span", span.name)], .integer(span.overBudget)) }
        }
        text.family(
            "perf_span_exits_total", type: "counter",
            help:
                "Span ends by exit other than success, whatever their duration: failure, cancelled, superseded, expired."
        ) { family in
            for span in spans where !span.exits.isEmpty {
                for exit in SpanTally.tallied.map(\.rawValue) {
                    family.sample([app, ("span", span.name), ("exit", exit)], .integer(span.exits[exit] ?? 0))
                }
            }
        }
        text.family("perf_span_budget_seconds", type: "gauge", help: "The budget a span runs under, in seconds.") {
            family in
            for span in spans {
                guard let budget = span.budgetSeconds else { continue }
                family.sample([app, ("span", span.name)], .double(budget))
            }
        }
    }

    private func hangFamilies(app: PrometheusText.Label, into text: inout PrometheusText) {
        let totals: [(String, String, UInt64)] = [
            ("perf_hangs_total", "Hangs the watchdog reported (not hitches).", hangs),
            ("perf_hangs_fatal_total", "Hangs the process died in.", fatalHangs),
            (
                "perf_hangs_suppressed_total", "Slow episodes not blamed (paused, stalled host, debugger).",
                suppressedHangs
            ),
        ]
        for (name, help, value) in totals {
            text.family(name, type: "counter", help: help) { $0.sample([app], .integer(value)) }
        }
        text.family(
            "perf_hang_duration_seconds", type: "histogram",
            help: "Hang and hitch durations per watchdog target."
        ) { family in
            for (target, histogram) in hangTargets.sorted(by: { $0.key < $1.key }) {
                family.histogram([app, ("target", target)], histogram)
            }
        }
    }
}
