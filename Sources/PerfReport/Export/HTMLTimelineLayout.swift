// Where everything on the html export's timeline goes: one block per session, one lane per
// thread, nested spans stacked in rows, hangs on their thread, notes on the session, within a
// recent window and a rect budget that keep the page small.
import Perf

/// The timeline as positioned data, computed before any markup so the limits are testable.
struct HTMLTimelineLayout {
    /// A span with the row it sits in within its lane (0 = outermost).
    struct PlacedSpan {
        var interval: ExportInput.Interval
        var row: Int
    }

    /// One thread of one session.
    struct Lane {
        var threadID: Int64?
        var name: String
        var rows: Int
        var spans: [PlacedSpan]
        var hangs: [ExportInput.Event]
    }

    /// One session's part of the timeline, on its own time axis.
    struct Block {
        var session: String
        var status: PerformanceReport.Session.Status
        /// The drawn window, Unix nanoseconds.
        var windowStart: Int64, windowEnd: Int64
        /// Where the session's recorded spans start, before the window cut.
        var recordedStart: Int64
        var lanes: [Lane]
        var notes: [ExportInput.Event]
        /// Spans that ended before the window.
        var olderThanWindow: Int
        /// Threads beyond the lane cap, and the spans on them.
        var hiddenLanes: Int, spansOnHiddenLanes: Int
    }

    /// The longest stretch of time one session's axis shows: the most recent part is drawn.
    static let maximumWindowNanos: Int64 = 120_000_000_000
    /// The most span rects the page draws; older spans past it are left out and counted.
    static let maximumSpanRects = 20_000
    /// Threads per session; the busiest are kept.
    static let maximumLanes = 48
    /// Nesting rows per lane; deeper spans share the last row.
    static let maximumRows = 4

    var blocks: [Block]
    /// Spans left out by ``maximumSpanRects``.
    var overRectCap: Int

    /// Every span drawn.
    var drawnSpans: Int { blocks.reduce(0) { $0 + $1.lanes.reduce(0) { $0 + $1.spans.count } } }

    init(_ input: ExportInput) {
        var bySession: [String: [ExportInput.Interval]] = [:]
        for interval in input.intervals { bySession[interval.session, default: []].append(interval) }
        var order = input.sessions.map(\.id).filter { bySession[$0] != nil }
        order += bySession.keys.filter { !order.contains($0) }.sorted()
        var seen = Set<String>()
        order = order.filter { seen.insert($0).inserted }

        // The window first, then the global rect cap on what is left, newest spans kept.
        var windowed: [(session: String, start: Int64, end: Int64, spans: [ExportInput.Interval], older: Int)] = []
        for session in order {
            let spans = bySession[session] ?? []
            let start = spans.map(\.startUnixNanos).min() ?? 0
            // A hang or note after the newest recorded span (a queue blocked after the work it
            // measured) still belongs on the timeline: the window reaches its end.
            let marks = input.events.filter {
                $0.session == session && [.hang, .hitch, .note].contains($0.kind) && $0.timeUnixNanos >= start
            }
            let end = max(spans.map(Self.end).max() ?? start, marks.map(\.timeUnixNanos).max() ?? start)
            let windowStart = max(start, Self.add(end, -Self.maximumWindowNanos))
            let kept = spans.filter { Self.end($0) >= windowStart }
            windowed.append((session, windowStart, max(end, Self.add(windowStart, 1)), kept, spans.count - kept.count))
        }
        var drop = windowed.map { Array(repeating: false, count: $0.spans.count) }
        let flat = windowed.indices.flatMap { block in
            windowed[block].spans.indices.map { (windowed[block].spans[$0].startUnixNanos, block, $0) }
        }
        overRectCap = max(0, flat.count - Self.maximumSpanRects)
        for (_, block, index) in flat.sorted(by: { $0 < $1 }).prefix(overRectCap) { drop[block][index] = true }

        let statuses = Dictionary(input.sessions.map { ($0.id, $0.status) }, uniquingKeysWith: { first, _ in first })
        var names: [String: String] = [:]
        for thread in input.threads { names[thread.session + "\u{0}" + String(thread.threadID)] = thread.name }

        blocks = windowed.indices.map { block in
            let entry = windowed[block]
            let drawn = entry.spans.indices.filter { !drop[block][$0] }.map { entry.spans[$0] }
            let events = input.events.filter {
                $0.session == entry.session && $0.timeUnixNanos >= entry.start && Self.start($0) <= entry.end
            }
            return Self.block(
                session: entry.session, status: statuses[entry.session] ?? .unknown,
                window: (entry.start, entry.end), spans: drawn, events: events, older: entry.older,
                recordedStart: bySession[entry.session]?.first?.startUnixNanos ?? entry.start,
                name: { names[entry.session + "\u{0}" + String($0)] })
        }
    }

    private static func block(
        session: String, status: PerformanceReport.Session.Status, window: (Int64, Int64),
        spans: [ExportInput.Interval],
        events: [ExportInput.Event], older: Int, recordedStart: Int64, name: (Int64) -> String?
    ) -> Block {
        var byThread: [Int64: [ExportInput.Interval]] = [:]
        for span in spans { byThread[span.threadID, default: []].append(span) }
        // A parent starting with its child must come first to be placed above it.
        byThread = byThread.mapValues {
            $0.sorted { ($0.startUnixNanos, -$0.durationNanos) < ($1.startUnixNanos, -$1.durationNanos) }
        }
        let hangs = events.filter { $0.kind == .hang || $0.kind == .hitch }
        var hangsByThread: [Int64?: [ExportInput.Event]] = [:]
        for hang in hangs { hangsByThread[hang.threadID, default: []].append(hang) }

        // The busiest threads, plus every thread a hang blames, up to the cap.
        let hangThreads = Set(hangs.compactMap(\.threadID))
        let ranked = Set(byThread.keys).union(hangThreads).sorted {
            let left = (hangThreads.contains($0) ? 1 : 0, byThread[$0]?.count ?? 0)
            let right = (hangThreads.contains($1) ? 1 : 0, byThread[$1]?.count ?? 0)
            return left != right ? left > right : $0 < $1
        }
        let shown = Array(ranked.prefix(maximumLanes)).sorted()
        let hidden = ranked.dropFirst(maximumLanes)
        var lanes = shown.map { tid -> Lane in
            let placed = placeRows(byThread[tid] ?? [])
            let threadHangs = hangsByThread[tid] ?? []
            let label = name(tid) ?? threadHangs.compactMap(\.thread).first.map(threadName) ?? "thread \(tid)"
            return Lane(
                threadID: tid, name: label, rows: max(1, (placed.map(\.row).max() ?? 0) + 1), spans: placed,
                hangs: threadHangs)
        }
        if let orphans = hangsByThread[nil], !orphans.isEmpty {
            lanes.append(Lane(threadID: nil, name: "hangs (thread unknown)", rows: 1, spans: [], hangs: orphans))
        }
        return Block(
            session: session, status: status, windowStart: window.0, windowEnd: window.1,
            recordedStart: recordedStart, lanes: lanes, notes: events.filter { $0.kind == .note },
            olderThanWindow: older, hiddenLanes: hidden.count,
            spansOnHiddenLanes: hidden.reduce(0) { $0 + (byThread[$1]?.count ?? 0) })
    }

    /// Rows by nesting: a span starting inside a span that is still open goes one row below it.
    static func placeRows(_ spans: [ExportInput.Interval]) -> [PlacedSpan] {
        var openEnds: [Int64] = []
        return spans.map { span in
            while let last = openEnds.last, last <= span.startUnixNanos { openEnds.removeLast() }
            let row = min(openEnds.count, maximumRows - 1)
            openEnds.append(end(span))
            return PlacedSpan(interval: span, row: row)
        }
    }

    /// `worker` out of a hang's `worker (tid 42, state R)`.
    static func threadName(_ description: String) -> String {
        guard let range = description.range(of: " (tid ") else { return description }
        return String(description[..<range.lowerBound])
    }

    /// `a + b`, pinned to Int64's range: a hostile report's numbers must not trap the exporter.
    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// Where a span ends, Unix nanoseconds.
    static func end(_ interval: ExportInput.Interval) -> Int64 {
        add(interval.startUnixNanos, interval.durationNanos)
    }

    /// Where a ledger event starts: its `ts` minus its duration. `Event.startUnixNanos` says the
    /// same but traps on a duration past Int64's range, which a damaged report can hold.
    static func start(_ event: ExportInput.Event) -> Int64 {
        let nanos = ((event.durationMs ?? 0) * 1e6).rounded()
        guard nanos.isFinite, abs(nanos) < 9e18 else { return .min }
        return add(event.timeUnixNanos, -Int64(nanos))
    }
}
