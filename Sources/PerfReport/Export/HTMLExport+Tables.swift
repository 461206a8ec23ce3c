// The html export's tables: sessions with their status, every span's figures, the slowest
// events of the ledger and the frames hangs were blamed on.
import Perf

extension HTMLExport {
    /// Rows any one table shows; what is left out is counted under it.
    static let maximumRows = 200
    /// Rows of the slowest-events table.
    static let slowestEventCount = 20

    /// A cell: escaped text, or trusted markup.
    enum Cell {
        /// Left-aligned; `nowrap` keeps a timestamp or a kind on one line.
        case text(String, nowrap: Bool = false)
        /// Right-aligned; `alarm` marks a figure over its budget.
        case number(String, alarm: Bool = false)
        case markup(String)

        var isNumber: Bool {
            if case .number = self { return true }
            return false
        }
    }

    static func table(
        _ headers: [String], _ rows: [[Cell]], total: Int, noun: String, into page: inout HTMLWriter
    ) {
        page.raw("<table><thead><tr>")
        // Numeric columns are right-aligned, headers included, so figures line up under them.
        for (index, header) in headers.enumerated() {
            let numeric = rows.first.map { index < $0.count && $0[index].isNumber } ?? false
            page.raw(numeric ? "<th class=\"num\">\(header)</th>" : "<th>\(header)</th>")
        }
        page.raw("</tr></thead><tbody>")
        for row in rows {
            page.raw("<tr>")
            for cell in row {
                switch cell {
                case .text(let text, let nowrap):
                    page.raw(nowrap ? "<td class=\"nowrap\">" : "<td>")
                    page.text(text)
                case .number(let text, let alarm):
                    page.raw(alarm ? "<td class=\"num over-count\">" : "<td class=\"num\">")
                    page.text(text)
                case .markup(let markup):
                    page.raw("<td>" + markup)
                }
                page.raw("</td>")
            }
            page.raw("</tr>")
        }
        page.raw("</tbody></table>")
        if total > rows.count {
            page.raw("<p class=\"caption left-out\">")
            page.text("\(plural(total - rows.count, noun)) not shown.")
            page.raw("</p>")
        }
    }

    /// CSS class suffix of a session status; anything unexpected reads as `unknown`.
    static func statusClass(_ status: PerformanceReport.Session.Status) -> String {
        switch status {
        case .active, .terminated, .crashed: status.rawValue
        case .unknown, .other: "unknown"
        }
    }

    static func badge(_ status: PerformanceReport.Session.Status) -> String {
        let text = HTMLWriter.escape(HTMLWriter.clipped(status.rawValue, 24))
        return "<span class=\"badge status-\(statusClass(status))\">\(text)</span>"
    }

    static func sessionsSection(_ input: ExportInput, into page: inout HTMLWriter) {
        page.raw("<section id=\"sessions\"><h2>Sessions</h2>")
        guard !input.sessions.isEmpty else {
            page.raw("<p class=\"notice\">No sessions in this report.</p></section>")
            return
        }
        var recorded: [String: Int] = [:]
        for interval in input.intervals { recorded[interval.session, default: 0] += 1 }
        var hangs: [String: Int] = [:]
        for event in input.events where event.kind == .hang { hangs[event.session, default: 0] += 1 }
        let rows = input.sessions.prefix(maximumRows).map { session -> [Cell] in
            let lasted = session.startedAtUnixNanos.flatMap { start in
                session.endedAtUnixNanos.map { duration(nanos: HTMLTimelineLayout.add($0, -start)) }
            }
            return [
                .text(session.id), .markup(badge(session.status)),
                .text(session.startedAtUnixNanos.map { time(unixNanos: $0) } ?? "–", nowrap: true),
                .text(session.endedAtUnixNanos.map { time(unixNanos: $0) } ?? "–", nowrap: true),
                .number(lasted ?? "–"),
                .number(count(Int64(recorded[session.id] ?? 0))), .number(count(Int64(hangs[session.id] ?? 0))),
            ]
        }
        if let most = input.maxConcurrentSessions {
            page.raw("<p>")
            page.text(most == 1 ? "At most 1 session was live at once." : "At most \(most) sessions were live at once.")
            page.raw("</p>")
        }
        table(
            ["Session", "Status", "Started", "Ended", "Lasted", "Recorded spans", "Hangs"], rows,
            total: input.sessions.count, noun: "more session", into: &page)
        page.raw("</section>")
    }

    static func spansTable(_ spans: [ExportInput.SpanStatistics], into page: inout HTMLWriter) {
        let rows = spans.prefix(maximumRows).map { span -> [Cell] in
            let figure = { (ms: Double) in onlyUnknownOrphans(span) ? "–" : duration(ms: ms) }
            var measuredText = span.source == .ledger ? "slow calls only" : "every call"
            if let orphans = orphans(span) { measuredText += "; " + orphans }
            return [
                .text(span.name), .number(count(span.count)), .number(figure(span.p50Ms)),
                .number(figure(span.p95Ms)), .number(figure(span.p99Ms)), .number(figure(span.maxMs)),
                .number(span.budgetMs.map { duration(ms: $0) } ?? "–"),
                .number(count(span.overBudget), alarm: span.overBudget > 0),
                .number(failed(span), alarm: failures(span) > 0),
                .text(measuredText),
            ]
        }
        table(
            ["Span", "Calls", "p50", "p95", "p99", "Max", "Budget", "Over budget", "Failed", "Measured"], rows,
            total: spans.count, noun: "more span", into: &page)
    }

    /// Ends of the span that failed (threw, or ended `.failure`), whatever their duration.
    static func failures(_ span: ExportInput.SpanStatistics) -> Int64 { span.exits["failure"] ?? 0 }

    /// The Failed cell: the count, with its share of the calls when there are any.
    static func failed(_ span: ExportInput.SpanStatistics) -> String {
        let failed = failures(span)
        guard failed > 0, span.count > 0 else { return count(failed) }
        return count(failed) + String(format: " · %.1f %%", Double(failed) / Double(span.count) * 100)
    }

    /// `2 orphaned, open ≥ 45s` (or `open for an unknown time`): spans of this name a crashed
    /// process left open; `nil` when none.
    static func orphans(_ span: ExportInput.SpanStatistics) -> String? {
        guard let orphaned = span.orphaned, orphaned > 0 else { return nil }
        let open = span.orphanedLowerMs.map { "open ≥ " + duration(ms: $0) } ?? "open for an unknown time"
        return "\(count(orphaned)) orphaned, \(open)"
    }

    /// Whether a span's only calls are orphans with no known duration: its figures are not 0,
    /// there are none.
    static func onlyUnknownOrphans(_ span: ExportInput.SpanStatistics) -> Bool {
        (span.orphaned ?? 0) > 0 && span.histogram?.isEmpty == true
    }

    /// Ledger events that have a duration, longest first (ties: earliest, then name).
    static func slowestEvents(_ input: ExportInput) -> [ExportInput.Event] {
        let timed = input.events.filter {
            [.span, .hang, .hitch, .overdue].contains($0.kind) && $0.durationMs != nil
        }
        return timed.sorted {
            let left = ($0.durationMs ?? 0, -$0.timeUnixNanos)
            let right = ($1.durationMs ?? 0, -$1.timeUnixNanos)
            return left != right ? left > right : ($0.name, $0.kind.rawValue) < ($1.name, $1.kind.rawValue)
        }
    }

    static func slowestSection(_ input: ExportInput, into page: inout HTMLWriter) {
        page.raw("<section id=\"slowest\"><h2>Slowest events</h2>")
        let events = slowestEvents(input)
        guard !events.isEmpty else {
            page.raw("<p class=\"notice\">No slow spans or hangs in the ledger.</p></section>")
            return
        }
        let rows = events.prefix(slowestEventCount).map { event -> [Cell] in
            let over = event.durationMs.flatMap { ms in event.budgetMs.map { ms > $0 } } ?? false
            let exit = event.kind == .hang ? (event.fatal ? "fatal" : "–") : (event.exit?.rawValue ?? "–")
            var kind =
                "<span class=\"kind kind-\([.span, .hang, .hitch].contains(event.kind) ? event.kind.rawValue : "other")\">"
            kind += HTMLWriter.escape(event.kind.rawValue) + "</span>"
            return [
                .markup(kind), .text(event.name),
                // An orphaned span's duration is how long it was open at least.
                .number(
                    (event.exit == .orphaned ? "≥ " : "") + duration(ms: event.durationMs ?? 0),
                    alarm: over || event.kind == .hang),
                .number(event.budgetMs.map { duration(ms: $0) } ?? "–"), .text(exit), .text(event.session),
                .text(time(unixNanos: event.timeUnixNanos), nowrap: true),
                .text(event.site ?? event.culprit.map(FunctionName.readable) ?? "–"),
                // What the call was about (a request's path), privacy-filtered when it was written.
                .text(event.detail ?? "–"),
            ]
        }
        table(
            ["Kind", "Name", "Duration", "Budget", "Exit", "Session", "Ended at", "Site / culprit", "Detail"], rows,
            total: events.count, noun: "shorter event", into: &page)
        page.raw("</section>")
    }

    static func hangsSection(_ input: ExportInput, into page: inout HTMLWriter) {
        let hangs = input.hangs
        page.raw("<section id=\"hangs\"><h2>Hangs</h2><p class=\"caption\">")
        page.text(
            "\(plural(hangs.count, "hang")) (\(count(hangs.fatal)) fatal, \(count(hangs.suppressed)) suppressed), "
                + "\(duration(ms: hangs.totalMs)) in total, the longest \(duration(ms: hangs.maxMs)).")
        page.raw("</p>")
        if hangs.culprits.isEmpty {
            page.raw("<p class=\"notice\">No hang culprits in this report.</p>")
        } else {
            let culprits = hangs.culprits.sorted { ($1.count, $0.culprit) < ($0.count, $1.culprit) }
            let rows = culprits.prefix(maximumRows).map { culprit -> [Cell] in
                // The function as a person writes it; the symbol as recorded on hover.
                let readable = FunctionName.readable(culprit.culprit)
                let function = HTMLWriter.escape(HTMLWriter.clipped(readable, HTMLWriter.visibleLimit))
                let symbol = HTMLWriter.escape(HTMLWriter.clipped(culprit.culprit, HTMLWriter.tooltipLimit))
                return [
                    .markup("<span title=\"\(symbol)\">\(function)</span>"), .number(count(culprit.count)),
                    .number(duration(ms: culprit.maxMs)),
                ]
            }
            table(["Culprit", "Hangs", "Longest"], rows, total: culprits.count, noun: "more culprit", into: &page)
        }
        let targets = hangs.targets.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        if !targets.isEmpty {
            page.raw("<div class=\"cards\">")
            for (target, histogram) in targets.prefix(maximumHistograms) {
                page.raw("<figure class=\"hist\"><figcaption><b>")
                page.text(target, limit: 48)
                page.raw("</b><span>")
                page.text(
                    histogram.count == 1
                        ? "1 hang or hitch" : "\(count(Int64(clamping: histogram.count))) hangs and hitches")
                page.raw("</span></figcaption>")
                histogramChart(histogram, budgetMs: nil, label: target, into: &page)
                page.raw("</figure>")
            }
            page.raw("</div>")
        }
        page.raw("</section>")
    }
}
