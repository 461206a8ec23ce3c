// The timeline the trace exporters (Chrome, OTLP) draw from an ExportInput: per session, its
// flight-recorder spans, the slow spans the ring no longer covers, hangs, instants and samples.
import Perf

extension ExportInput {
    /// Whether a trace format (`chrome`, `otlp`) has anything to draw: flight-recorder spans, or
    /// ledger spans, hangs, hitches, notes or overdue spans.
    ///
    /// An older report without intervals still exports its ledger events; one without those
    /// either would give an empty trace, which `perf-report export` refuses to write.
    public var hasTraceEvents: Bool {
        hasIntervals || events.contains { ExportTimeline.shownKinds.contains($0.kind) }
    }
}

/// Sessions in time order, each with what a trace shows of it. Pure: the same input always gives
/// the same timeline, so exports are byte-for-byte repeatable.
struct ExportTimeline {
    typealias Interval = ExportInput.Interval
    typealias Event = ExportInput.Event

    /// One session's share of the trace.
    struct Session {
        var id: String
        var status: PerformanceReport.Session.Status
        /// 1, 2, … in order of start: the Chrome `pid`, the OTLP resource's position.
        var ordinal: Int
        /// From the session's start (or its first event) to its end (or its last event).
        var startUnixNanos: Int64, endUnixNanos: Int64
        var intervals: [Interval] = []
        /// Slow spans from the ledger that ended before the flight recorder's oldest span.
        var ledgerSpans: [Event] = []
        /// `hang` and `hitch` lines.
        var hangs: [Event] = []
        /// `note` and `overdue` lines.
        var instants: [Event] = []
        var samples: [ExportInput.ProcessSample] = []
        /// Thread names by kernel tid, from the newest snapshot that named the thread.
        var threadNames: [Int64: String] = [:]
        /// The scope ids of flight-recorder spans (by position in ``intervals``) that a ledger line
        /// the ring covers describes: how a child span in the ring finds its parent.
        var intervalScopes: [Int: SpanScopes] = [:]

        /// The name of `tid` in this session, or `thread <tid>` when no snapshot named it.
        func threadName(_ tid: Int64) -> String { threadNames[tid] ?? "thread \(tid)" }
    }

    /// Ledger kinds a trace shows.
    static let shownKinds: Set<PerformanceReport.Event.Kind> = [.span, .hang, .hitch, .note, .overdue]
    /// Ledger `ts` has millisecond resolution; a ledger span that ends within this of the ring's
    /// oldest span may be that span, so it counts as covered rather than drawn twice.
    static let ledgerResolutionNanos: Int64 = 1_000_000

    var sessions: [Session]
    /// The earliest time in the trace, Unix nanoseconds (0 for an empty one).
    var originUnixNanos: Int64

    init(_ input: ExportInput) {
        var byID: [String: Session] = [:]
        // In place: a copy out of the dictionary and back would copy the session's arrays on
        // every append, quadratic in the number of spans.
        func touch(_ id: String, _ body: (inout Session) -> Void) {
            body(&byID[id, default: .empty(id)])
        }
        for listed in input.sessions {
            touch(listed.id) { session in
                session.status = listed.status
                for time in [listed.startedAtUnixNanos, listed.endedAtUnixNanos].compactMap({ $0 }) {
                    session.include(time, time)
                }
            }
        }
        for interval in input.intervals {
            touch(interval.session) {
                $0.intervals.append(interval)
                $0.include(interval.startUnixNanos, interval.startUnixNanos + interval.durationNanos)
            }
        }
        for thread in input.threads {
            touch(thread.session) { session in
                if session.threadNames[thread.threadID] == nil { session.threadNames[thread.threadID] = thread.name }
            }
        }
        for event in input.events where Self.shownKinds.contains(event.kind) {
            touch(event.session) { session in
                switch event.kind {
                case .span: session.ledgerSpans.append(event)
                case .hang, .hitch:
                    session.hangs.append(event)
                    if let tid = event.threadID, session.threadNames[tid] == nil, let thread = event.thread {
                        session.threadNames[tid] = Self.threadLabel(thread)
                    }
                default: session.instants.append(event)
                }
                session.include(event.startUnixNanos, event.timeUnixNanos)
            }
        }
        for sample in input.processSamples {
            touch(sample.session) {
                $0.samples.append(sample)
                $0.include(sample.timeUnixNanos, sample.timeUnixNanos)
            }
        }
        var ordered = byID.values.filter { $0.startUnixNanos <= $0.endUnixNanos }
            .sorted { ($0.startUnixNanos, $0.id) < ($1.startUnixNanos, $1.id) }
        for index in ordered.indices {
            ordered[index].ordinal = index + 1
            ordered[index].dropCoveredLedgerSpans()
        }
        sessions = ordered
        originUnixNanos = ordered.first?.startUnixNanos ?? 0
    }

    /// `durationNanos` over `budgetMs` (no budget: never over).
    static func isOverBudget(durationNanos: Int64, budgetMs: Double?) -> Bool {
        guard let budgetMs else { return false }
        return Double(durationNanos) > budgetMs * 1_000_000
    }

    /// The name part of a hang line's `name (tid N, state S)`.
    static func threadLabel(_ description: String) -> String {
        guard let range = description.range(of: " (tid ", options: .backwards) else { return description }
        return String(description[..<range.lowerBound])
    }

    /// A ledger event's duration in nanoseconds (0 for an instant).
    static func durationNanos(_ event: Event) -> Int64 { event.timeUnixNanos - event.startUnixNanos }
}

extension ExportTimeline.Session {
    /// A session known only by its id so far: no status, and an empty time range.
    static func empty(_ id: String) -> Self {
        Self(id: id, status: .unknown, ordinal: 0, startUnixNanos: .max, endUnixNanos: .min)
    }

    mutating func include(_ start: Int64, _ end: Int64) {
        startUnixNanos = min(startUnixNanos, start)
        endUnixNanos = max(endUnixNanos, end)
    }

    /// Keeps the ledger spans the ring does not hold. The ring keeps the newest spans by end
    /// time, so it holds every span that ended at or after its oldest entry's end; an orphaned
    /// span never ended, so no ring holds it.
    mutating func dropCoveredLedgerSpans() {
        guard let oldestEnd = intervals.map({ $0.startUnixNanos + $0.durationNanos }).min() else { return }
        let isCovered = { (event: ExportTimeline.Event) in
            event.exit != .orphaned && event.timeUnixNanos + ExportTimeline.ledgerResolutionNanos >= oldestEnd
        }
        matchScopes(of: ledgerSpans.filter(isCovered))
        ledgerSpans.removeAll(where: isCovered)
    }
}
