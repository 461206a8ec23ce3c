// The sections of performance-report.json as JSON values: spans, hangs, diagnostics (sessions are
// in ReportSessions.swift).
// Pure functions of what was read, so their order and number formatting are fixed.
import PerfCore

enum ReportSections {
    /// One entry per span name, merged over sessions with one source per session: a session
    /// whose newest snapshot holds the name gives that histogram plus its lines of the name the
    /// snapshot cannot hold (later ones, orphaned ones); any other session gives its lines
    /// (`"source":"ledger"` when no session gave a histogram: only the over-budget and
    /// always-recorded ends, so the percentiles describe the slow tail). `count` and
    /// `overBudget` are sums over the same sessions, so `overBudget` never exceeds `count` for
    /// honest input. `budgetMs` is the newest ledger line's that had one, else (a span never
    /// over its budget writes no line) the newest flight-recorder interval's of the name; `sites`
    /// are those of its ledger lines and those the snapshots kept (each name's first span of a
    /// session), so a span that never breached still names where it began.
    static func spans(snapshots: [DiagnosticSnapshot], ledger: [String: LedgerDigest.SpanLines])
        -> [(name: String, count: UInt64, json: ReportJSON)]
    {
        var histograms: [String: LatencyHistogram] = [:]
        for snapshot in snapshots {
            for (name, histogram) in snapshot.spans where !histogram.isEmpty {
                histograms[name, default: LatencyHistogram()].merge(histogram)
            }
        }
        var tallies: [String: SpanTally] = [:]
        for snapshot in snapshots {
            for (name, tally) in snapshot.spanTallies ?? [:] { tallies[name, default: SpanTally()].merge(tally) }
        }
        let names = Set(histograms.keys).union(ledger.keys).union(tallies.keys)
        let intervalBudgets = intervalBudgets(snapshots)
        var snapshotSites: [String: Set<String>] = [:]
        for snapshot in snapshots {
            for (name, sites) in snapshot.spanSites { snapshotSites[name, default: []].formUnion(sites) }
        }
        return names.map { name in
            let lines = ledger[name]
            let total = lines?.total ?? LedgerDigest.SessionSpanLines()
            let fromSnapshots = histograms[name]
            var histogram = fromSnapshots ?? LatencyHistogram()
            if let lines { histogram.merge(lines.durations) }
            let count = (fromSnapshots?.count ?? 0) &+ UInt64(total.added)
            var members = statistics(histogram)
            members["count"] = .int(Int64(clamping: count))
            let source: ReportBuilder.SpanSource = fromSnapshots == nil ? .ledger : .histogram
            members["source"] = .string(source.rawValue)
            members["budgetMs"] = (lines?.budgetMs ?? intervalBudgets[name]).map(ReportJSON.double) ?? .null
            var tally = tallies[name] ?? SpanTally()
            tally.merge(total.tallyAdded)
            members["overBudget"] = .int(Int64(clamping: tally.overBudget))
            members["overBudgetLines"] = .int(Int64(total.overBudget))
            let exits = SpanTally.tallied.compactMap { exit -> (String, ReportJSON)? in
                let count = tally.count(of: exit)
                return count > 0 ? (exit.rawValue, .int(Int64(clamping: count))) : nil
            }
            if !exits.isEmpty { members["exits"] = .object(Dictionary(uniqueKeysWithValues: exits)) }
            let sites = (lines?.sites ?? []).union(snapshotSites[name] ?? [])
            members["sites"] = .array(sites.sorted().prefix(64).map(ReportJSON.string))
            if source == .histogram, let ledgerOnly = lines?.ledgerOnlySessions, ledgerOnly > 0 {
                members["ledgerOnlySessions"] = .int(Int64(ledgerOnly))
            }
            if total.orphaned > 0 {
                members["orphaned"] = .int(Int64(total.orphaned))
                if let bound = lines?.orphanedLowerMs { members["orphanedLowerMs"] = .double(rounded(bound)) }
            }
            return (name, count, .object(members))
        }
    }

    /// Each span name's budget in the flight-recorder intervals: that of its newest span with
    /// one, in the newest snapshot (`snapshots` is newest first) holding such a span.
    static func intervalBudgets(_ snapshots: [DiagnosticSnapshot]) -> [String: Double] {
        var budgets: [String: Double] = [:]
        for snapshot in snapshots {
            // Spans are oldest first: the newest of a name is the last one.
            for span in (snapshot.intervals?.spans ?? []).reversed() where budgets[span.name] == nil {
                if let budget = span.budgetMs, budget.isFinite, budget >= 0 { budgets[span.name] = budget }
            }
        }
        return budgets
    }

    /// count, sum, min, max, percentiles (milliseconds) and the compact histogram.
    static func statistics(_ histogram: LatencyHistogram) -> [String: ReportJSON] {
        [
            "count": .int(Int64(clamping: histogram.count)), "sum": .ms(nanos: histogram.sumNanos),
            "min": .ms(nanos: histogram.minNanos), "max": .ms(nanos: histogram.maxNanos),
            "p50Ms": .ms(nanos: histogram.quantile(0.50)), "p90Ms": .ms(nanos: histogram.quantile(0.90)),
            "p95Ms": .ms(nanos: histogram.quantile(0.95)), "p99Ms": .ms(nanos: histogram.quantile(0.99)),
            "histogram": .raw(Array(histogram.jsonString.utf8)),
        ]
    }

    /// Hangs from the ledger's hang lines (every hang writes one), culprits by count, and the
    /// per-target hang and hitch histograms of the snapshots.
    static func hangs(_ digest: LedgerDigest, targets: [String: LatencyHistogram]) -> ReportJSON {
        let culpritsByCount = digest.culprits.sorted { lhs, rhs in
            lhs.value.count != rhs.value.count ? lhs.value.count > rhs.value.count : lhs.key < rhs.key
        }
        var culprits: [ReportJSON] = []
        for (culprit, entry) in culpritsByCount.prefix(ReportLimits.maximumListedHangEntries) {
            culprits.append(
                .object([
                    "culprit": .string(culprit), "count": .int(Int64(entry.count)),
                    "maxMs": .double(rounded(entry.maxMs)),
                    "targets": .array(entry.targets.sorted().map(ReportJSON.string)),
                ]))
        }
        let targetsByCount = targets.sorted { lhs, rhs in
            lhs.value.count != rhs.value.count ? lhs.value.count > rhs.value.count : lhs.key < rhs.key
        }
        var listedTargets: [String: ReportJSON] = [:]
        for (name, histogram) in targetsByCount.prefix(ReportLimits.maximumListedHangEntries) {
            listedTargets[String(name.prefix(ReportLimits.maximumNameLength))] = .raw(Array(histogram.jsonString.utf8))
        }
        var members: [String: ReportJSON] = [
            "count": .int(Int64(digest.hangCount)), "fatal": .int(Int64(digest.fatalHangs)),
            "suppressed": .int(Int64(digest.suppressedHangs)), "totalMs": .double(rounded(digest.hangTotalMs)),
            "maxMs": .double(rounded(digest.hangMaxMs)),
        ]
        members["histogram"] = .raw(Array(digest.hangDurations.jsonString.utf8))
        members["culprits"] = .array(culprits)
        members["targets"] = .object(listedTargets)
        return .object(members)
    }

    /// One diagnostics entry: where it came from and the process figures (its histograms are
    /// already merged into `spans` and `hangs`).
    static func diagnostic(_ snapshot: DiagnosticSnapshot, file: String) -> ReportJSON {
        .object([
            "file": .string(DiagnosticFiles.directoryName + "/" + file), "session": .string(snapshot.session),
            "takenAt": .string(LedgerTimestamp.string(ms: snapshot.takenAtMs)), "reason": .string(snapshot.reason),
            "process": snapshot.process.json,
        ])
    }

    static func rounded(_ ms: Double) -> Double { (ms * 1000).rounded() / 1000 }
}
