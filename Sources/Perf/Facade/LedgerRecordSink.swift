// Renders pipeline records as ledger lines: decides which records deserve a line and applies the
// privacy filter, so nothing reaches the file that the contract keeps out (keys, content).
import CPerfShims
import PerfCore

/// The inline sink that writes `perf-events.jsonl`: a line is on disk when `end()` returns, unless
/// another thread was writing one then (its line follows, from the sink's backlog, in a batch;
/// lines the full backlog dropped are counted in a `dropped` line with `"cause":"backlog"`).
final class LedgerRecordSink: RecordSink {
    let writer: LedgerWriter
    let sessionID: String

    init(writer: LedgerWriter, sessionID: String) {
        self.writer = writer
        self.sessionID = sessionID
    }

    /// Only records that make a line: begins and under-budget ends never take a backlog slot.
    func accepts(_ record: Record) -> Bool { LedgerLines.writesLine(for: record) }

    func receive(_ record: SequencedRecord) throws {
        guard let event = LedgerLines.event(for: record.record, session: sessionID) else { return }
        try writer.append(event)
    }

    /// The backlog's records as one run of lines: one `write(2)` per run of up to 256 KiB.
    func receive(batch: [SequencedRecord]) -> Int {
        writer.append(batch: batch.compactMap { LedgerLines.event(for: $0.record, session: sessionID) })
    }

    /// Records the lane dropped before they reached the ledger: a `dropped` line with the count and
    /// its cause, in order among the lines.
    func receiveDropped(_ count: UInt64, cause: DropCause) {
        var line = LedgerEvent(
            kind: .dropped, name: "ledger", session: sessionID,
            timestampMs: Int64(perf_realtime_ns() / 1_000_000))
        line.count = Int(clamping: count)
        line.extra["cause"] = .string(cause.rawValue)
        try? writer.append(line)
    }
}

/// Pure mapping from records to ledger events.
enum LedgerLines {
    /// The ledger line for a record, or `nil` when the record does not belong in the ledger
    /// (an under-budget end of a registered span, a begin).
    static func event(for record: Record, session: String) -> LedgerEvent? {
        switch record {
        case .spanEnded(let end):
            return span(end, session: session)
        case .spanBegan:
            return nil
        case .overdue(let overdue):
            var event = LedgerEvent(
                kind: .overdue, name: overdue.name, session: session, timestampMs: milliseconds(overdue.wallNanos))
            event.durationMs = ms(overdue.openForNanos)
            event.budgetMs = ms(overdue.budgetNanos)
            event.site = overdue.site
            return event
        case .unmatchedEnd(let unmatched):
            var event = LedgerEvent(
                kind: .note, name: unmatched.name ?? "perf.unmatchedEnd", session: session,
                timestampMs: milliseconds(unmatched.wallNanos))
            event.extra["reason"] = .string("end without a matching begin")
            event.site = unmatched.site
            return event
        case .note(let note):
            var event = LedgerEvent(
                kind: .note, name: note.name, session: session, timestampMs: milliseconds(note.wallNanos))
            event.detail = note.detail.map(PrivacyFilter.sanitize(detail:))
            if note.suppressedCount > 0 { event.extra["suppressedCount"] = .int(Int64(note.suppressedCount)) }
            return event
        case .hang(let hang):
            return self.hang(hang, session: session)
        case .session(let sessionEvent):
            var event = LedgerEvent(
                kind: .session, name: sessionEvent.event.rawValue, session: sessionEvent.sessionID,
                timestampMs: milliseconds(sessionEvent.wallNanos))
            event.detail = sessionEvent.note
            return event
        }
    }

    /// Whether `event(for:session:)` returns a line for `record`, without building it.
    static func writesLine(for record: Record) -> Bool {
        switch record {
        case .spanBegan: false
        case .spanEnded(let end): writesLine(for: end)
        case .overdue, .unmatchedEnd, .note, .hang, .session: true
        }
    }

    static func writesLine(for end: SpanEndRecord) -> Bool {
        end.isOverBudgetOrAlwaysRecorded || end.exit == .expired || end.exit == .orphaned
    }

    static func span(_ end: SpanEndRecord, session: String) -> LedgerEvent? {
        guard writesLine(for: end) else { return nil }
        let endWall = end.startWallNanos &+ (end.durationNanos ?? 0)
        var event = LedgerEvent(kind: .span, name: end.name, session: session, timestampMs: milliseconds(endWall))
        event.durationMs = end.durationNanos.map(ms)
        event.budgetMs = end.budgetNanos.map(ms)
        event.exit = end.exit.rawValue
        event.detail = end.detail.map(PrivacyFilter.sanitize(detail:))
        event.count = end.count
        event.site = end.site
        if let reason = end.reason { event.extra["reason"] = .string(PrivacyFilter.sanitize(detail: reason)) }
        return event
    }

    static func hang(_ hang: HangRecord, session: String) -> LedgerEvent {
        var event = LedgerEvent(
            kind: hang.kind == .hang ? .hang : .hitch, name: hang.targetName, session: session,
            timestampMs: milliseconds(hang.wallNanos))
        event.durationMs = hang.durationMs ?? ((hang.lowerMs + hang.upperMs) / 2 * 10).rounded() / 10
        event.lowerMs = hang.lowerMs
        event.upperMs = hang.upperMs
        event.stallMs = hang.stallMs
        event.fatal = hang.fatal
        event.suppressed = hang.suppressed
        event.thread = hang.thread
        if !hang.stack.isEmpty { event.stack = hang.stack }
        if !hang.stuckFrames.isEmpty { event.stuckFrames = hang.stuckFrames }
        event.culprit = hang.culprit
        if let quality = hang.stackQuality { event.extra["stackQuality"] = .string(quality) }
        if let wait = hang.wait { event.extra["wait"] = .string(wait) }
        if hang.inProgress { event.extra["inProgress"] = .bool(true) }
        return event
    }

    static func milliseconds(_ wallNanos: UInt64) -> Int64 { Int64(wallNanos / 1_000_000) }

    /// Nanoseconds as milliseconds, unrounded: a span over a tiny budget must still read as over
    /// it (rounding to the microsecond made a 0.3 µs span over a 0 ms budget read as 0 ms).
    static func ms(_ nanos: UInt64) -> Double { Double(nanos) / 1_000_000 }
}
