// The ledger's span lines, aggregated per name and per session, and split by whether a snapshot
// already holds their calls: the report counts each call from one source per session.
import PerfCore

/// When a session's newest snapshot was taken and the span names it holds calls of.
///
/// A snapshot's histograms are cumulative from its process start, so a span line of such a
/// name timestamped at or before `takenAtMs` is already one of its calls; a later one is not.
struct SnapshotCover: Equatable {
    var takenAtMs: Int64
    var names: Set<String>
    /// Whether the snapshot counts over-budget and non-success ends itself (``DiagnosticSnapshot/spanTallies``):
    /// then a line at or before `takenAtMs` is already in those counts, whatever its name.
    var tallied = false

    /// One cover per session id a payload names: its newest snapshot (`newest` is newest first).
    /// Names whose histogram is empty are left out: such a snapshot holds no call of them.
    static func covers(_ newest: [(name: String, snapshot: DiagnosticSnapshot)]) -> [String: SnapshotCover] {
        var covers: [String: SnapshotCover] = [:]
        for (_, snapshot) in newest where covers[snapshot.session] == nil {
            covers[snapshot.session] = SnapshotCover(
                takenAtMs: snapshot.takenAtMs, names: Set(snapshot.spans.filter { !$0.value.isEmpty }.keys),
                tallied: snapshot.spanTallies != nil)
        }
        return covers
    }
}

extension LedgerDigest {
    /// The span lines of one name in one session.
    struct SessionSpanLines: Equatable {
        /// Whether the session's newest snapshot holds calls of the name.
        var covered = false
        /// Lines read.
        var lines = 0
        /// Lines whose calls no snapshot holds: all of them without a cover, else those after
        /// it and the orphaned ones (a span left open never reaches a histogram).
        var added = 0
        /// Lines over their budget, whether a snapshot holds their calls or not.
        var overBudget = 0
        /// Lines with `"exit":"orphaned"`.
        var orphaned = 0
        /// What the lines no tallying snapshot counted add to the name's tally: all of them
        /// without such a snapshot, else those after it.
        var tallyAdded = SpanTally()

        mutating func add(_ other: SessionSpanLines) {
            lines += other.lines
            added += other.added
            overBudget += other.overBudget
            orphaned += other.orphaned
            tallyAdded.merge(other.tallyAdded)
        }
    }

    /// Aggregates of the span lines of one name.
    struct SpanLines {
        /// Per session; a session past ``LedgerDigest/maximumSpanSessions`` pairs is in
        /// ``untracked`` instead, so the totals still hold every line.
        var sessions: [String: SessionSpanLines] = [:]
        /// The lines of sessions not tracked one by one.
        var untracked = SessionSpanLines()
        var budgetMs: Double?
        var sites: Set<String> = []
        /// Durations of the ``SessionSpanLines/added`` lines.
        var durations = LatencyHistogram()
        /// The largest lower bound of how long an orphaned span was open, when a line gave one.
        var orphanedLowerMs: Double?

        /// Every line of the name, summed over sessions.
        var total: SessionSpanLines {
            sessions.values.reduce(into: untracked) { $0.add($1) }
        }

        /// Sessions whose calls of the name come from ledger lines only (no snapshot holds any).
        var ledgerOnlySessions: Int { sessions.values.count { !$0.covered } }

        /// Adds one line; `cover` is its session's, `track` whether the session has (or may get)
        /// an entry of its own.
        mutating func add(_ event: LedgerEvent, cover: SnapshotCover?, track: Bool) {
            let covered = cover.map { $0.names.contains(event.name) } ?? false
            let orphaned = event.exit == "orphaned"
            var line = SessionSpanLines(covered: covered, lines: 1)
            if orphaned {
                line.orphaned = 1
                if let bound = event.lowerMs ?? event.durationMs, bound.isFinite, bound >= 0 {
                    orphanedLowerMs = max(orphanedLowerMs ?? bound, bound)
                }
            }
            let inSnapshot = covered && !orphaned && event.timestampMs <= (cover?.takenAtMs ?? .min)
            if !inSnapshot { line.added = 1 }
            if let budget = event.budgetMs { budgetMs = budget }
            let inTally = (cover?.tallied ?? false) && !orphaned && event.timestampMs <= (cover?.takenAtMs ?? .min)
            if let duration = event.durationMs {
                if let budget = event.budgetMs, duration > budget {
                    line.overBudget = 1
                    if !inTally {
                        line.tallyAdded.overBudget = 1
                        line.tallyAdded.overBudgetNanos = ReportLimits.nanos(ms: duration)
                    }
                }
                if !inSnapshot { durations.record(nanos: ReportLimits.nanos(ms: duration)) }
            }
            if !inTally {
                switch event.exit.flatMap(SpanExit.init(rawValue:)) {
                case .failure?: line.tallyAdded.failure = 1
                case .cancelled?: line.tallyAdded.cancelled = 1
                case .superseded?: line.tallyAdded.superseded = 1
                case .expired?: line.tallyAdded.expired = 1
                default: break
                }
            }
            if let site = event.site, sites.count < 64 { sites.insert(site) }
            if track {
                sessions[event.session, default: SessionSpanLines(covered: covered)].add(line)
            } else {
                untracked.add(line)
            }
        }
    }
}
