// The counters `Perf.prometheusText()` needs that neither a histogram nor span memory's tallies
// hold: each span's newest budget, hangs by kind, and what this start recovered. Fed by the record
// pipeline, so only the slow paths (an end over budget, a registered span, a hang) pay, and the
// under-budget end never reaches it.
import PerfCore
import Synchronization

/// Counters of one runtime's session, monotonic while it lasts: nothing here is reset by a read.
final class LiveMetrics: RecordSink, Sendable {
    /// One span name's counters.
    struct Span: Sendable, Equatable {
        /// The newest budget an emitted end of the name carried (`.some(nil)`: none, recorded
        /// every time); `nil` while no end told.
        var budgetNanos: UInt64?? = nil
    }

    /// What a scrape copies out.
    struct Counts: Sendable, Equatable {
        /// Span counters by name.
        var spans: [String: Span] = [:]
        /// Hangs (not hitches) reported, those the process died in (or reached `fatalAfter`), and
        /// suppressed ones: the ledger digest's rules, so the live and report totals agree.
        var hangs: UInt64 = 0, fatalHangs: UInt64 = 0, suppressedHangs: UInt64 = 0
        /// Sessions recovered at this start, by status (`crashed`, `terminated`).
        var recoveredSessions: [String: UInt64] = [:]
    }

    /// Distinct span names tracked; more are not counted (the span memory holds 1,024 by default).
    static let maximumNames = 4096

    private let counts = Mutex(Counts())
    /// A hash of the newest (name, budget) pair stored: an end that repeats it (a burst of one
    /// name) skips the lock, so many threads ending the same span never queue on it.
    private let lastBudget = Atomic<Int>(0)

    /// A concurrent sink: a dictionary update under a lock of its own, on slow paths only, and only
    /// when a name's budget is news.
    func receive(_ record: SequencedRecord) {
        switch record.record {
        case .spanEnded(let end):
            var hasher = Hasher()
            hasher.combine(end.name)
            hasher.combine(end.budgetNanos)
            let key = hasher.finalize() | 1
            guard lastBudget.load(ordering: .relaxed) != key else { return }
            counts.withLock { counts in
                defer { lastBudget.store(key, ordering: .relaxed) }
                guard counts.spans.count < Self.maximumNames || counts.spans[end.name] != nil else { return }
                // One lookup, updated in place: this runs on every over-budget end.
                counts.spans[end.name, default: Span()].budgetNanos = .some(end.budgetNanos)
            }
        case .hang(let hang) where hang.kind == .hang:
            counts.withLock { counts in
                guard hang.suppressed == nil else {
                    counts.suppressedHangs += 1
                    return
                }
                counts.hangs += 1
                if hang.fatal { counts.fatalHangs += 1 }
            }
        default:
            return
        }
    }

    /// Counts what recovery found at this start: prior sessions by status, and the hangs crashed
    /// ones died in (each a fatal hang, as its ledger line says).
    func recovered(_ sessions: [RecoveredSession]) {
        counts.withLock { counts in
            for session in sessions {
                switch session.status {
                case .crashed: counts.recoveredSessions["crashed", default: 0] += 1
                case .terminated: counts.recoveredSessions["terminated", default: 0] += 1
                case .unreadable: continue
                }
                let fatal = UInt64(session.fatalMarkers.filter { $0.kind != "hitch" }.count)
                counts.hangs += fatal
                counts.fatalHangs += fatal
            }
        }
    }

    /// Remembers budgets learnt elsewhere (the flight recorder) for names no record told yet.
    func learnBudgets(_ budgets: [String: UInt64?]) {
        counts.withLock { counts in
            for (name, budget) in budgets where counts.spans[name]?.budgetNanos == nil {
                guard counts.spans.count < Self.maximumNames || counts.spans[name] != nil else { return }
                counts.spans[name, default: Span()].budgetNanos = .some(budget)
            }
        }
    }

    /// A copy of the counters.
    var snapshot: Counts { counts.withLock { $0 } }
}
