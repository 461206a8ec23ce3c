// Renders pipeline records as ledger lines: decides which records deserve a line and applies the
// privacy filter, so nothing reaches the file that the contract keeps out (keys, content).
import CPerfShims
import Foundation
import PerfCore

/// The concurrent sink that writes `perf-events.jsonl`: the emitting thread encodes the line and
/// copies it into the crash-durable ``LedgerQueue``, so the line survives a kill once `end()`
/// returns. It is in the file by then too, unless another thread was draining the queue (the
/// drain writes it next, in a run); a line the full queue had no room for is counted in a
/// `dropped` line with `"cause":"backlog"`.
final class LedgerRecordSink: RecordSink {
    let queue: LedgerQueue
    let sessionID: String

    init(queue: LedgerQueue, sessionID: String) {
        self.queue = queue
        self.sessionID = sessionID
    }

    /// Only records that make a line: begins and under-budget ends cost nothing here.
    func accepts(_ record: Record) -> Bool { LedgerLines.writesLine(for: record) }

    func receive(_ record: SequencedRecord) { submit(record, mayWrite: true) }

    /// Under the span registry's lock: the line is queued (durable) and left to the drain.
    func receiveWithoutBlocking(_ record: SequencedRecord) { submit(record, mayWrite: false) }

    private func submit(_ record: SequencedRecord, mayWrite: Bool) {
        guard let event = LedgerLines.event(for: record.record, session: sessionID) else { return }
        var line: [UInt8] = []
        line.reserveCapacity(512)
        LedgerEncoder.encodeLine(event, into: &line)
        _ = line.withUnsafeBytes { queue.submit($0, mayWrite: mayWrite) }
    }

    func waitUntilDone(deadline: Date) -> Bool { queue.waitUntilWritten(deadline: deadline) }
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
        if end.childrenUncounted { event.extra["childrenUncounted"] = .bool(true) }
        if !end.children.isEmpty {
            event.extra["children"] = .objects(
                end.children.sorted { $0.totalNanos > $1.totalNanos }.map { child in
                    [
                        "name": .string(child.name), "count": .int(Int64(clamping: child.count)),
                        "totalMs": .double(ms(child.totalNanos)), "maxMs": .double(ms(child.maxNanos)),
                    ]
                })
            let inChildren = end.children.reduce(UInt64(0)) { $0 &+ $1.totalNanos }
            event.extra["selfMs"] = .double(ms((end.durationNanos ?? 0) &- min(end.durationNanos ?? 0, inChildren)))
        }
        if let profile = end.profile { event.extra["profile"] = profile.ledgerValue }
        if let scope = end.scope { event.extra["scope"] = .int(Int64(bitPattern: scope)) }
        if let parent = end.parentScope { event.extra["parentScope"] = .int(Int64(bitPattern: parent)) }
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
