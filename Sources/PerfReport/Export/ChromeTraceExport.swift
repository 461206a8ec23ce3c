// A report as Chrome Trace Event JSON, the format Perfetto UI, chrome://tracing and speedscope
// open: one process per session, one lane per thread, hangs on the blocked thread's lane.
import Perf

/// Renders a report as a Chrome Trace Event file (JSON object form).
///
/// Each session is a process (`pid` 1, 2, … in order of start) named after the app, the
/// session and its status; each kernel thread is a lane (`tid` = the thread id) named as the
/// process named it. Flight-recorder spans and hangs are complete events (`ph:"X"`), slow
/// spans older than the flight recorder's window sit on a `ledger` lane, notes and overdue
/// spans are instants, and resident memory is a counter.
///
/// `ts` and `dur` are microseconds after the earliest event, so they keep nanosecond
/// precision in a double; `otherData.originUnixNanos` is that moment as Unix nanoseconds.
/// Events are sorted by `ts` after the metadata, and the same report always gives the same
/// bytes.
///
/// ```swift
/// let input = try ExportInput(contentsOf: reportURL)
/// try Data(ChromeTraceExport.render(input)).write(to: traceURL)
/// ```
///
/// - Note: Complete events on one lane must nest; a span that overlaps another without
///   nesting (a keyed span ended on another thread) moves to an extra lane named
///   `<thread> (overlapping N)`.
public enum ChromeTraceExport {
    /// The trace's bytes: one JSON object, newline-terminated.
    public static func render(_ input: ExportInput) -> [UInt8] {
        let timeline = ExportTimeline(input)
        var events = ChromeTraceEvents(origin: timeline.originUnixNanos)
        for session in timeline.sessions {
            events.add(session, app: input.app)
        }
        var otherData: [String: ReportJSON] = [
            "app": .string(input.app.name), "version": .string(input.app.version),
            "build": .string(input.app.build), "originUnixNanos": .string(String(timeline.originUnixNanos)),
            "timeUnit": .string("ts and dur are microseconds after originUnixNanos"),
            "intervals": .bool(input.hasIntervals), "exporter": .string("perf-report export --format chrome"),
        ]
        if input.generatedAtUnixNanos > 0 {
            otherData["reportGeneratedAt"] = .string(
                LedgerTimestamp.string(ms: input.generatedAtUnixNanos / 1_000_000))
        }
        let document = ReportJSON.object([
            "traceEvents": .array(events.sorted()), "displayTimeUnit": .string("ms"),
            "otherData": .object(otherData),
        ])
        var bytes = document.bytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

/// Collects one trace's events: metadata in the order written, timed events sorted at the end.
struct ChromeTraceEvents {
    /// A timed event and what it sorts by.
    struct Timed {
        var startNanos: Int64
        var durationNanos: Int64
        var order: Int
        var json: ReportJSON
    }

    /// Where a slice is drawn before lanes are assigned.
    enum Track: Hashable, Comparable {
        case thread(Int64)
        case ledger
        case unknownThread
    }

    /// A complete event waiting for its lane.
    struct Slice {
        var track: Track
        var startNanos: Int64
        var durationNanos: Int64
        /// How much later the slice may really have started (see ``ChromeTraceLanes/Slice/slack``).
        var slackNanos: Int64
        var name: String
        var category: String
        var args: [String: ReportJSON]
        /// This slice's position among the session's slices, and its parent's (a ledger span whose
        /// `parentScope` is another ledger span's `scope`).
        var id = 0
        var parentID: Int? = nil
        /// The span's own scope and its parent's, when its line (or the line covering it) says.
        var scopes = SpanScopes()
    }

    /// Synthetic lanes take tids above the kernel's largest (2^22), so they never meet a real one.
    static let syntheticThreadBase: Int64 = 1 << 30

    let origin: Int64
    var metadata: [ReportJSON] = []
    var timed: [Timed] = []
    /// The id of the next flow arrow from a parent to a child on another lane.
    var nextFlowID: Int64 = 1

    init(origin: Int64) { self.origin = origin }

    /// Microseconds after the origin.
    func micros(_ unixNanos: Int64) -> ReportJSON { .double(Double(unixNanos - origin) / 1_000) }

    mutating func add(_ session: ExportTimeline.Session, app: Perf.AppInfo) {
        let pid = Int64(session.ordinal)
        let label = "\(app.name) \(app.version) (build \(app.build)) · session \(session.id) · \(session.status)"
        metadata.append(Self.metadata("process_name", pid: pid, tid: 0, ["name": .string(label)]))
        metadata.append(Self.metadata("process_sort_index", pid: pid, tid: 0, ["sort_index": .int(pid)]))
        addSlices(Self.slices(of: session), session: session, pid: pid)
        for event in session.instants {
            var args: [String: ReportJSON] = [:]
            args["detail"] = event.detail.map(ReportJSON.string)
            args["site"] = event.site.map(ReportJSON.string)
            args["budgetMs"] = event.budgetMs.map(ReportJSON.double)
            if event.kind == .overdue { args["openMs"] = event.durationMs.map(ReportJSON.double) }
            let name = event.kind == .overdue ? "overdue \(event.name)" : event.name
            let json = ReportJSON.object([
                "name": .string(name), "cat": .string(event.kind.rawValue), "ph": .string("i"), "s": .string("p"),
                "ts": micros(event.timeUnixNanos), "pid": .int(pid), "tid": .int(0), "args": .object(args),
            ])
            timed.append(Timed(startNanos: event.timeUnixNanos, durationNanos: 0, order: timed.count, json: json))
        }
        for sample in session.samples {
            let json = ReportJSON.object([
                "name": .string("memory"), "ph": .string("C"), "ts": micros(sample.timeUnixNanos), "pid": .int(pid),
                "tid": .int(0),
                "args": .object(["rssBytes": .int(sample.rssBytes), "peakRssBytes": .int(sample.peakRssBytes)]),
            ])
            timed.append(Timed(startNanos: sample.timeUnixNanos, durationNanos: 0, order: timed.count, json: json))
        }
    }

    /// Flight-recorder spans, uncovered ledger spans and hangs of one session, before lanes.
    static func slices(of session: ExportTimeline.Session) -> [Slice] {
        var slices: [Slice] = []
        for (index, interval) in session.intervals.enumerated() {
            var args: [String: ReportJSON] = ["exit": .string(interval.exit.rawValue)]
            args["budgetMs"] = interval.budgetMs.map(ReportJSON.double)
            args["overBudget"] = .bool(
                ExportTimeline.isOverBudget(durationNanos: interval.durationNanos, budgetMs: interval.budgetMs))
            slices.append(
                Slice(
                    track: .thread(interval.threadID), startNanos: interval.startUnixNanos,
                    durationNanos: interval.durationNanos, slackNanos: 0, name: interval.name, category: "span",
                    args: args, scopes: session.intervalScopes[index] ?? SpanScopes()))
        }
        for event in session.ledgerSpans {
            let duration = ExportTimeline.durationNanos(event)
            var args: [String: ReportJSON] = [:]
            args["exit"] = event.exit.map { .string($0.rawValue) }
            args["budgetMs"] = event.budgetMs.map(ReportJSON.double)
            args["overBudget"] = .bool(ExportTimeline.isOverBudget(durationNanos: duration, budgetMs: event.budgetMs))
            args["detail"] = event.detail.map(ReportJSON.string)
            args["site"] = event.site.map(ReportJSON.string)
            args["count"] = event.count.map(ReportJSON.int)
            args.merge(ChromeTraceEvents.spanPartArgs(event)) { $1 }
            if event.exit == .orphaned {
                // Left open by a crashed process: the slice is the part of it known, not all of it.
                args["open"] = .string(event.durationMs.map { "≥ \($0) ms" } ?? "for an unknown time")
            }
            slices.append(
                Slice(
                    track: .ledger, startNanos: event.startUnixNanos, durationNanos: duration,
                    slackNanos: ExportTimeline.ledgerResolutionNanos, name: event.name, category: "ledger", args: args,
                    scopes: SpanScopes(scope: event.scope, parentScope: event.parentScope)))
        }
        for event in session.hangs {
            var args: [String: ReportJSON] = ["fatal": .bool(event.fatal)]
            args["culprit"] = event.culprit.map(ReportJSON.string)
            args["lowerMs"] = event.lowerMs.map(ReportJSON.double)
            args["upperMs"] = event.upperMs.map(ReportJSON.double)
            args["durationMs"] = event.durationMs.map(ReportJSON.double)
            args["thread"] = event.thread.map(ReportJSON.string)
            args["suppressed"] = event.suppressed.map(ReportJSON.string)
            slices.append(
                Slice(
                    track: event.threadID.map(Track.thread) ?? .unknownThread, startNanos: event.startUnixNanos,
                    durationNanos: ExportTimeline.durationNanos(event),
                    slackNanos: ExportTimeline.ledgerResolutionNanos,
                    name: "\(event.kind) \(event.name)", category: "hang", args: args))
        }
        for index in slices.indices { slices[index].id = index }
        linkChildren(&slices)
        return slices
    }

    /// Places each track's slices on lanes, names the lanes, and adds the complete events.
    mutating func addSlices(_ slices: [Slice], session: ExportTimeline.Session, pid: Int64) {
        var nextSynthetic = Self.syntheticThreadBase
        // Where each slice went (by id): its lane's tid and its start, for the flow arrows.
        var placed: [Int: (tid: Int64, start: Int64)] = [:]
        for (track, group) in Dictionary(grouping: slices, by: \.track).sorted(by: { $0.key < $1.key }) {
            let ordered = group.sorted { lhs, rhs in
                if lhs.startNanos != rhs.startNanos { return lhs.startNanos < rhs.startNanos }
                if lhs.durationNanos != rhs.durationNanos { return lhs.durationNanos > rhs.durationNanos }
                return (lhs.category, lhs.name) < (rhs.category, rhs.name)
            }
            var position: [Int: Int] = [:]
            for (index, slice) in ordered.enumerated() { position[slice.id] = index }
            let placements = ChromeTraceLanes.assign(
                ordered.map {
                    .init(
                        start: $0.startNanos, duration: $0.durationNanos, slack: $0.slackNanos,
                        parent: $0.parentID.flatMap { position[$0] })
                })
            let baseName: String
            var tids: [Int64] = []
            switch track {
            case .thread(let tid):
                baseName = session.threadName(tid)
                tids.append(tid)
            case .ledger: baseName = "ledger (slow spans before the flight recorder)"
            case .unknownThread: baseName = "hangs (thread unknown)"
            }
            for lane in 0...(placements.map(\.lane).max() ?? 0) where lane >= tids.count {
                tids.append(nextSynthetic)
                nextSynthetic += 1
            }
            for (lane, tid) in tids.enumerated() {
                let name = lane == 0 ? baseName : "\(baseName) (overlapping \(lane))"
                metadata.append(Self.metadata("thread_name", pid: pid, tid: tid, ["name": .string(name)]))
            }
            for (slice, placement) in zip(ordered, placements) {
                let json = ReportJSON.object([
                    "name": .string(slice.name), "cat": .string(slice.category), "ph": .string("X"),
                    "ts": micros(placement.start), "dur": .double(Double(slice.durationNanos) / 1_000),
                    "pid": .int(pid), "tid": .int(tids[placement.lane]), "args": .object(slice.args),
                ])
                timed.append(
                    Timed(
                        startNanos: placement.start, durationNanos: slice.durationNanos, order: timed.count, json: json)
                )
                placed[slice.id] = (tids[placement.lane], placement.start)
            }
        }
        addFlows(slices, placed: placed, pid: pid)
    }

    /// Metadata first, then every timed event by start, the longer first among equal starts
    /// (a parent before its children), then in the order added.
    func sorted() -> [ReportJSON] {
        let ordered = timed.sorted { lhs, rhs in
            if lhs.startNanos != rhs.startNanos { return lhs.startNanos < rhs.startNanos }
            if lhs.durationNanos != rhs.durationNanos { return lhs.durationNanos > rhs.durationNanos }
            return lhs.order < rhs.order
        }
        return metadata + ordered.map(\.json)
    }

    static func metadata(_ name: String, pid: Int64, tid: Int64, _ args: [String: ReportJSON]) -> ReportJSON {
        .object([
            "name": .string(name), "ph": .string("M"), "ts": .int(0), "pid": .int(pid), "tid": .int(tid),
            "args": .object(args),
        ])
    }
}
