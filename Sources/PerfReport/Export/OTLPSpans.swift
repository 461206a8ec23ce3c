// The OTLP spans under a session's root (flight-recorder and uncovered ledger spans) and the
// events on the root (hangs, hitches, notes, overdue spans).
import Perf

/// A session's child spans in a fixed order, so span ids (by position) are repeatable.
struct OTLPChildSpan {
    var name: String
    var startUnixNanos: Int64
    var durationNanos: Int64
    var exit: PerformanceReport.Exit?
    var attributes: [ReportJSON]
    /// A ledger span's own scope (it had children) and the scope of the parent it began in.
    var scope: Int64? = nil
    var parentScope: Int64? = nil

    /// Every child span of `session`, by start, the longer first among equal starts.
    static func children(of session: ExportTimeline.Session) -> [OTLPChildSpan] {
        var children: [OTLPChildSpan] = []
        for (index, interval) in session.intervals.enumerated() {
            var attributes = [
                OTLPAttribute.string("perf.source", "flight-recorder"),
                OTLPAttribute.string("perf.exit", interval.exit.rawValue),
                OTLPAttribute.int("thread.id", interval.threadID),
                OTLPAttribute.string("thread.name", session.threadName(interval.threadID)),
                OTLPAttribute.bool(
                    "perf.over_budget",
                    ExportTimeline.isOverBudget(durationNanos: interval.durationNanos, budgetMs: interval.budgetMs)),
            ]
            if let budget = interval.budgetMs { attributes.append(OTLPAttribute.double("perf.budget_ms", budget)) }
            children.append(
                .init(
                    name: interval.name, startUnixNanos: interval.startUnixNanos, durationNanos: interval.durationNanos,
                    exit: interval.exit, attributes: attributes, scope: session.intervalScopes[index]?.scope,
                    parentScope: session.intervalScopes[index]?.parentScope))
        }
        for event in session.ledgerSpans {
            let duration = ExportTimeline.durationNanos(event)
            var attributes = [
                OTLPAttribute.string("perf.source", "ledger"),
                OTLPAttribute.bool(
                    "perf.over_budget", ExportTimeline.isOverBudget(durationNanos: duration, budgetMs: event.budgetMs)),
            ]
            if let exit = event.exit { attributes.append(OTLPAttribute.string("perf.exit", exit.rawValue)) }
            if let budget = event.budgetMs { attributes.append(OTLPAttribute.double("perf.budget_ms", budget)) }
            if let detail = event.detail { attributes.append(OTLPAttribute.string("perf.detail", detail)) }
            if let count = event.count { attributes.append(OTLPAttribute.int("perf.count", count)) }
            attributes += codeAttributes(site: event.site)
            if let selfMs = event.selfMs { attributes.append(OTLPAttribute.double("perf.self_ms", selfMs)) }
            children.append(
                .init(
                    name: event.name, startUnixNanos: event.startUnixNanos, durationNanos: duration, exit: event.exit,
                    attributes: attributes, scope: event.scope, parentScope: event.parentScope))
        }
        return children.sorted { lhs, rhs in
            if lhs.startUnixNanos != rhs.startUnixNanos { return lhs.startUnixNanos < rhs.startUnixNanos }
            if lhs.durationNanos != rhs.durationNanos { return lhs.durationNanos > rhs.durationNanos }
            return lhs.name < rhs.name
        }
    }

    /// Each span's parent among `spans` (by position), or nil for the session's root: a span
    /// whose `parentScope` is the `scope` of another span of the session (a ledger span's own, or
    /// a flight-recorder span's from the covered line that describes it). A parent that wrote no
    /// line (it was under budget) leaves its child under the root.
    static func parents(of spans: [OTLPChildSpan]) -> [Int?] {
        var byScope: [Int64: Int] = [:]
        for (index, span) in spans.enumerated() {
            if let scope = span.scope, byScope[scope] == nil { byScope[scope] = index }
        }
        return spans.enumerated().map { index, span in
            guard let parent = span.parentScope.flatMap({ byScope[$0] }), parent != index else { return nil }
            return parent
        }
    }

    /// `code.filepath` and `code.lineno` from a site `Module/File.swift:88`.
    static func codeAttributes(site: String?) -> [ReportJSON] {
        guard let site else { return [] }
        guard let colon = site.lastIndex(of: ":"), let line = Int64(site[site.index(after: colon)...]) else {
            return [OTLPAttribute.string("code.filepath", site)]
        }
        return [OTLPAttribute.string("code.filepath", String(site[..<colon])), OTLPAttribute.int("code.lineno", line)]
    }

    func json(traceID: String, spanID: String, parentID: String) -> ReportJSON {
        var span: [String: ReportJSON] = [
            "traceId": .string(traceID), "spanId": .string(spanID), "parentSpanId": .string(parentID),
            "name": .string(name), "kind": .int(OTLPExport.internalKind),
            "startTimeUnixNano": .string(String(startUnixNanos)),
            "endTimeUnixNano": .string(String(startUnixNanos + durationNanos)), "attributes": .array(attributes),
        ]
        // Success leaves the status Unset (no `status` member), as the specification asks of
        // instrumentation; only an error end sets one.
        if let exit, exit.isError {
            span["status"] = OTLPExport.errorStatus("the span ended as \(exit)")
        }
        return .object(span)
    }

    /// When an event happened: a hang or hitch when it began (its duration is an attribute), a
    /// note or an overdue span when it was written.
    static func eventTime(_ event: ExportTimeline.Event) -> Int64 {
        event.kind == .hang || event.kind == .hitch ? event.startUnixNanos : event.timeUnixNanos
    }

    /// A hang, hitch, note or overdue span as a span event of the root.
    static func event(_ event: ExportTimeline.Event) -> ReportJSON {
        var attributes = [
            OTLPAttribute.string("perf.kind", event.kind.rawValue), OTLPAttribute.string("perf.name", event.name),
        ]
        let name: String
        switch event.kind {
        case .hang, .hitch:
            name = "\(event.kind) \(event.name)"
            attributes.append(OTLPAttribute.bool("perf.hang.fatal", event.fatal))
            let bounds = [
                ("perf.hang.duration_ms", event.durationMs), ("perf.hang.lower_ms", event.lowerMs),
                ("perf.hang.upper_ms", event.upperMs),
            ]
            for case (let key, let value?) in bounds { attributes.append(OTLPAttribute.double(key, value)) }
            if let culprit = event.culprit { attributes.append(OTLPAttribute.string("perf.hang.culprit", culprit)) }
            if let reason = event.suppressed { attributes.append(OTLPAttribute.string("perf.hang.suppressed", reason)) }
            if let tid = event.threadID { attributes.append(OTLPAttribute.int("thread.id", tid)) }
            if let thread = event.thread {
                attributes.append(OTLPAttribute.string("thread.name", ExportTimeline.threadLabel(thread)))
            }
        case .overdue:
            name = "overdue \(event.name)"
            if let open = event.durationMs { attributes.append(OTLPAttribute.double("perf.open_ms", open)) }
            if let budget = event.budgetMs { attributes.append(OTLPAttribute.double("perf.budget_ms", budget)) }
        default:
            name = event.name
        }
        if let detail = event.detail { attributes.append(OTLPAttribute.string("perf.detail", detail)) }
        attributes += codeAttributes(site: event.site)
        return .object([
            "timeUnixNano": .string(String(eventTime(event))), "name": .string(name), "attributes": .array(attributes),
        ])
    }
}
