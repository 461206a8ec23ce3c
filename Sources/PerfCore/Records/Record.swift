// The one value type every sink receives: what happened, numbered in emission order.

/// Something worth keeping that happened in the process: a slow span, an overdue span, a hang,
/// a note, a session event.
///
/// Records flow from emitters (the span recorder, the hang watchdog, the session) through the
/// ``RecordPipeline`` to every ``RecordSink``. They carry no formatting: the ledger, exporters and
/// tests each decide how to render them.
public enum Record: Sendable, Equatable {
    /// A span closed: over budget, always-recorded, a registered span's end, or one closed for it
    /// (superseded, expired, orphaned).
    case spanEnded(SpanEndRecord)
    /// A registered (keyed, bounded or indefinite) span began.
    case spanBegan(SpanBeginRecord)
    /// A budgeted registered span is still open past its budget.
    case overdue(OverdueRecord)
    /// `end(key:)` found no open span under its key.
    case unmatchedEnd(UnmatchedEndRecord)
    /// A noteworthy event (`Perf.note`).
    case note(NoteRecord)
    /// A hang or hitch of a monitored thread or queue.
    case hang(HangRecord)
    /// A session started, ended or was found crashed.
    case session(SessionEventRecord)

    /// The same record with its free-form content (detail, reason, count) removed.
    ///
    /// The pipeline delivers this copy when a transform drops one half of a begin/end pair, so a
    /// reader never sees a begin without its end (or the reverse).
    public var stripped: Record {
        switch self {
        case .spanEnded(var end):
            end.detail = nil
            end.reason = nil
            end.count = nil
            return .spanEnded(end)
        case .spanBegan, .overdue, .unmatchedEnd, .note, .hang, .session:
            return self
        }
    }

    /// The id of the registered span this record is one half of, or `nil` when the record is not
    /// part of a begin/end pair.
    public var pairedSpanID: UInt64? {
        switch self {
        case .spanBegan(let begin): return begin.id
        case .spanEnded(let end) where end.id != 0: return end.id
        default: return nil
        }
    }
}

/// A record with the global sequence number it received when it was emitted.
///
/// Sequence numbers start at 1 and grow by one per emitted record across the whole pipeline, so a
/// gap seen by a buffered sink means records were dropped on its overflowing queue.
public struct SequencedRecord: Sendable, Equatable {
    /// Position in the pipeline's total emission order, from 1.
    public let sequence: UInt64
    /// What happened.
    public let record: Record

    /// Pairs a record with its sequence number.
    public init(sequence: UInt64, record: Record) {
        self.sequence = sequence
        self.record = record
    }
}

extension Record {
    /// The least ``estimatedBytes`` of any record: a ledger line's fixed keys and numbers.
    public static let minimumEstimatedBytes = 192

    /// About how many bytes the record's ledger line takes: its fixed keys plus the text it
    /// carries. What an inline sink's backlog counts against its bound (an estimate, never less
    /// than ``minimumEstimatedBytes``; the JSON escaping of unusual text can exceed it).
    public var estimatedBytes: Int {
        func length(_ text: String?) -> Int { text?.utf8.count ?? 0 }
        let text: Int
        switch self {
        case .spanEnded(let end):
            text = length(end.name) + length(end.site) + length(end.detail) + length(end.reason) + length(end.key)
        case .spanBegan(let begin):
            text = length(begin.name) + length(begin.site) + length(begin.key)
        case .overdue(let overdue):
            text = length(overdue.name) + length(overdue.site)
        case .unmatchedEnd(let unmatched):
            text = length(unmatched.name) + length(unmatched.key)
        case .note(let note):
            text = length(note.name) + length(note.detail)
        case .hang(let hang):
            text =
                length(hang.targetName) + length(hang.thread) + length(hang.culprit) + length(hang.wait)
                + hang.stack.reduce(0) { $0 + $1.utf8.count + 3 }
                + hang.stuckFrames.reduce(0) { $0 + $1.utf8.count + 3 }
        case .session(let session):
            text = length(session.sessionID) + length(session.note)
        }
        return Self.minimumEstimatedBytes + text
    }
}
