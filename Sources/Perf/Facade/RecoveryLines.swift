// The ledger lines that tell the story of a prior session found at start-up: how it ended, the
// spans it left open, the hang it died in.
import PerfCore

enum RecoveryLines {
    static func events(for recovered: RecoveredSession, profiles: ProfileSlots.Recovered? = nil) -> [LedgerEvent] {
        let startMs = LedgerLines.milliseconds(recovered.info?.startWallNanos ?? 0)
        var lines: [LedgerEvent] = []
        switch recovered.status {
        case .terminated:
            // A clean end already wrote its own line; only spans it left open are news.
            break
        case .crashed:
            var line = LedgerEvent(kind: .session, name: "crashed", session: recovered.id, timestampMs: startMs)
            line.detail = recovered.recoveryNote
            if let info = recovered.info {
                line.extra["pid"] = .int(Int64(info.pid))
                line.extra["app"] = .string(info.app.name)
                line.extra["version"] = .string(info.app.version)
            }
            if let memory = recovered.spanMemory {
                line.extra["lastAliveMs"] = .int(Int64(memory.lastAliveWallNanos / 1_000_000))
                line.extra["tornRecords"] = .int(Int64(memory.tornRecords))
                line.extra["tornSlots"] = .int(Int64(memory.tornSlots))
                if memory.damaged > 0 { line.extra["damagedEntries"] = .int(Int64(memory.damaged)) }
                if memory.droppedRecords > 0 {
                    line.extra["droppedRecords"] = .int(Int64(clamping: memory.droppedRecords))
                }
            }
            if let problem = recovered.spanMemoryProblem {
                line.extra["spanMemory"] = .string(String(problem.prefix(200)))
            }
            if let profiles, profiles.dropped > 0 {
                line.extra["profilesDropped"] = .int(Int64(clamping: profiles.dropped))
            }
            if let profiles, profiles.damaged > 0 { line.extra["profilesDamaged"] = .int(Int64(profiles.damaged)) }
            lines.append(line)
        case .unreadable(let reason):
            var line = LedgerEvent(kind: .session, name: "unreadable", session: recovered.id, timestampMs: startMs)
            line.detail = String(reason.prefix(200))
            lines.append(line)
        }
        for span in recovered.orphanedSpans {
            var line = LedgerEvent(
                kind: .span, name: span.name, session: recovered.id,
                timestampMs: LedgerLines.milliseconds(span.startWallNanos))
            line.exit = SpanExit.orphaned.rawValue
            line.budgetMs = span.budgetNanos.map(LedgerLines.ms)
            // Open at least until the process was last known alive: a lower bound, never 0.
            if let alive = recovered.spanMemory?.lastAliveWallNanos, alive > span.startWallNanos {
                let lower = LedgerLines.ms(alive - span.startWallNanos)
                line.lowerMs = lower
                line.durationMs = lower
            }
            line.site = span.site
            line.extra["lifetime"] = .string(span.lifetime)
            lines.append(line)
        }
        for span in profiles?.open ?? [] {
            var line = LedgerEvent(
                kind: .span, name: span.name, session: recovered.id,
                timestampMs: LedgerLines.milliseconds(span.startWallNanos))
            line.exit = SpanExit.orphaned.rawValue
            line.budgetMs = LedgerLines.ms(span.budgetNanos)
            // Open at least until the process was last known alive, and at least its budget and
            // an interval per tick after the first (which found it over budget).
            var lower = 0.0
            if let alive = recovered.spanMemory?.lastAliveWallNanos, alive > span.startWallNanos {
                lower = LedgerLines.ms(alive - span.startWallNanos)
            }
            if let profile = span.profile, profile.ticks > 0 {
                lower = max(lower, LedgerLines.ms(span.budgetNanos) + Double(profile.ticks - 1) * profile.intervalMs)
            }
            if lower > 0 {
                line.lowerMs = lower
                line.durationMs = lower
            }
            if let profile = span.profile {
                line.extra["profile"] = profile.ledgerValue
            } else {
                // The process died while the sampler rewrote it: the span is known, its samples not.
                line.extra["profileTorn"] = .bool(true)
            }
            lines.append(line)
        }
        for marker in recovered.fatalMarkers {
            let kind: LedgerEvent.Kind = marker.kind == "hitch" ? .hitch : .hang
            var line = LedgerEvent(
                kind: kind, name: marker.name, session: recovered.id,
                timestampMs: LedgerLines.milliseconds(marker.startedWallNanos))
            let lastKnown = LedgerLines.ms(marker.lastKnownDurationNanos)
            line.fatal = true
            line.lowerMs = lastKnown
            line.durationMs = lastKnown
            line.culprit = marker.payload["culprit"]
            line.thread = marker.payload["thread"]
            if let wait = marker.payload["wait"] { line.extra["wait"] = .string(wait) }
            if let stack = marker.payload["stack"], !stack.isEmpty {
                line.stack = stack.split(separator: "\n").map(String.init)
            }
            if let stuck = marker.payload["stuckFrames"], !stuck.isEmpty {
                line.stuckFrames = stuck.split(separator: "\n").map(String.init)
            }
            lines.append(line)
        }
        return lines
    }
}
