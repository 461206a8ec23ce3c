// `Perf.prometheusText()`: the running process's metrics in Prometheus text exposition, for a
// service that serves them on a route of its own HTTP server. The families are the report
// export's (`perf-report export --format prometheus`), written by the same code.
import Glibc
import PerfCore

extension Perf {
    /// The current metrics in Prometheus text exposition format 0.0.4, for a service to serve on
    /// a route of its own HTTP server (`GET /metrics`).
    ///
    /// The families, label names and buckets are those of `perf-report export --format
    /// prometheus`, from the same code, so dashboards and alerts work on either:
    /// - `perf_span_duration_seconds` (histogram per `span`, every end of this session, buckets
    ///   0.5 ms to 60 s), `perf_span_over_budget_total`, `perf_span_budget_seconds` (the newest
    ///   budget the span ran under);
    /// - `perf_hangs_total`, `perf_hangs_fatal_total` (hangs this start recovered from a crashed
    ///   session, and live ones that reached `fatalAfter`), `perf_hangs_suppressed_total`,
    ///   `perf_hang_duration_seconds` (histogram per watchdog `target`, hangs and hitches);
    /// - `perf_sessions{status}`: this session `active`, and the `crashed` and `terminated`
    ///   sessions recovered when this one started;
    /// - `perf_process_resident_memory_bytes` (read now) and `perf_app_info`.
    ///
    /// Every series has an `app` label. There are no timestamps (Prometheus stamps the scrape),
    /// and no `perf_report_generated_timestamp_seconds` (there is no report). Counters and
    /// histogram series only grow while a session lasts: a call reads, it never resets.
    ///
    /// A call copies the histograms and counters out and renders without holding any lock the
    /// program's threads take on their own paths (spans end, and hangs are recorded, while it
    /// runs). Most of its cost is that copy, the one ``spanHistograms()`` makes: on a shared
    /// 2-core machine a median of about 1.2 ms with 100 span names (174 KB of text) and 30 ms
    /// with 1,000 (1.7 MB), `perf-bench --only metrics`; scraped every 15 s, 0.2 % of a core.
    ///
    /// ```swift
    /// router.get("/metrics") { _ in
    ///     Response(body: Perf.prometheusText(),
    ///              contentType: "text/plain; version=0.0.4; charset=utf-8")
    /// }
    /// ```
    ///
    /// - Returns: The exposition. Before ``install(_:)`` (or after ``shutdown()``) it holds
    ///   `perf_app_info` for the running executable's name, no session and zero hang totals.
    public static func prometheusText() -> String {
        let metrics = LivePrometheus.metrics(
            PerfState.runtime(), hangTargets: PerfState.hangHistograms.snapshot(),
            residentMemoryBytes: LivePrometheus.residentMemoryBytes())
        return String(decoding: metrics.render(), as: UTF8.self)
    }
}

/// The live figures of a runtime, in the model the export renders too.
package enum LivePrometheus {
    /// The metrics of `runtime` now; `nil` (not installed) gives the executable's name, and zeros.
    static func metrics(
        _ runtime: PerfRuntime?, hangTargets: [String: LatencyHistogram], residentMemoryBytes: UInt64?
    ) -> PrometheusMetrics {
        guard let runtime else { return PrometheusMetrics(source: .live, app: .current) }
        var metrics = PrometheusMetrics(source: .live, app: runtime.configuration.app)
        let histograms = runtime.allHistograms().filter { !$0.value.isEmpty }
        let live = runtime.operations.metrics
        var counts = live.snapshot
        let tallies = runtime.allTallies()
        let names = Set(histograms.keys).union(counts.spans.keys).union(tallies.keys)
        // A span never over budget and never registered told no record its budget: the flight
        // recorder's newest end of it did. Looked up once per name, then remembered.
        if names.contains(where: { counts.spans[$0]?.budgetNanos == nil }),
            let flight = runtime.recorder.flightRecorder
        {
            live.learnBudgets(newestBudgets(flight.snapshot()))
            counts = live.snapshot
        }
        metrics.spans = names.sorted().map { name in
            let span = counts.spans[name] ?? LiveMetrics.Span()
            let tally = tallies[name] ?? SpanTally()
            var figures = PrometheusMetrics.Span(
                name: name, histogram: histograms[name], overBudget: tally.overBudget,
                budgetSeconds: (span.budgetNanos ?? nil).map { Double($0) / 1_000_000 / 1_000 })
            for exit in SpanTally.tallied where tally.count(of: exit) > 0 {
                figures.exits[exit.rawValue] = tally.count(of: exit)
            }
            return figures
        }
        metrics.sessions = counts.recoveredSessions.merging(["active": 1], uniquingKeysWith: +)
        metrics.hangs = counts.hangs
        metrics.fatalHangs = counts.fatalHangs
        metrics.suppressedHangs = counts.suppressedHangs
        metrics.hangTargets = hangTargets.filter { !$0.value.isEmpty }
        metrics.residentMemoryBytes = residentMemoryBytes
        metrics.droppedLines = runtime.droppedLedgerLines()
        metrics.droppedSpanRecords = runtime.histograms.droppedRecordCount
        metrics.droppedProfiles = runtime.sampler?.slots.dropped ?? 0
        return metrics
    }

    /// Each name's budget in its newest entry of the ring.
    static func newestBudgets(_ snapshot: FlightRecorder.Snapshot) -> [String: UInt64?] {
        var budgets: [String: UInt64?] = [:]
        for entry in snapshot.entries.reversed() where budgets[entry.name] == nil {
            budgets[entry.name] = .some(entry.budgetNanos)
        }
        return budgets
    }

    /// Resident set size from `/proc/self/statm` (pages × page size), or `nil` when unreadable.
    package static func residentMemoryBytes() -> UInt64? {
        guard let statm = ProcProbe.read("/proc/self/statm") else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return nil }
        return pages &* UInt64(max(sysconf(Int32(_SC_PAGESIZE)), 0))
    }
}
