import Foundation
// The two renderings of a report summary: an aligned text table and a versioned JSON document.
import Perf

extension ReportSummary {
    /// The summary as text tables, for a terminal.
    public var text: String {
        var lines: [String] = []
        lines.append("Performance report: \(app), generated \(generatedAt)")
        if truncated { lines.append("(the report hit its size cap; see \"truncated\" in the file)") }
        lines.append("")
        lines.append("SPANS (slowest p95 first)")
        if spans.isEmpty {
            lines.append("  none recorded")
        } else {
            lines.append(row(["NAME", "COUNT", "P50 ms", "P95 ms", "P99 ms", "MAX ms", "BUDGET ms", "OVER", "FAILED"]))
            for span in spans {
                let name = span.source == .ledger ? span.name + " *" : span.name
                // A maximum an orphan's open time gave is a lower bound; nothing measured is "-".
                let atLeast = span.orphanedLowerMs.map { $0 >= span.maxMs } ?? false
                let maximum = (atLeast ? "≥" : "") + format(span.maxMs)
                let figures =
                    span.measured
                    ? [format(span.p50Ms), format(span.p95Ms), format(span.p99Ms), maximum] : ["-", "-", "-", "-"]
                lines.append(
                    row(
                        [name, "\(span.count)"] + figures
                            + [span.budgetMs.map(format) ?? "-", "\(span.overBudget)", Self.failed(span)]))
                // The sampler's answer to why, under the figures that say how slow.
                if let cause = span.topCause { lines.append("    top cause: " + cause.text) }
            }
            let over = spans.reduce(Int64(0)) { $0 &+ $1.overBudget }
            let held = spans.reduce(Int64(0)) { $0 &+ ($1.overBudgetLines ?? $1.overBudget) }
            if held < over {
                lines.append(
                    "  OVER counts every end over budget; the ledger still holds \(held) of their \(over) lines")
            }
            if spans.contains(where: { $0.source == .ledger }) {
                lines.append("  * from ledger lines only (slow calls); no histogram snapshot held this span")
            }
            let orphans = spans.filter { ($0.orphaned ?? 0) > 0 }
            if !orphans.isEmpty {
                lines.append("  left open by a crashed process:")
                for span in orphans { lines.append("    " + pad(span.name, 34) + Self.orphans(span)) }
            }
        }
        lines += slowestLines
        lines.append("")
        lines.append(
            "HANGS: \(hangCount) (\(fatalHangs) fatal, \(suppressedHangs) suppressed), max \(format(hangMaxMs)) ms")
        if !culprits.isEmpty {
            lines.append("  " + pad("CULPRIT", 60) + leftPad("COUNT", 7) + leftPad("MAX ms", 11))
            for culprit in culprits {
                lines.append(
                    "  " + pad(FunctionName.readable(culprit.culprit), 60) + leftPad("\(culprit.count)", 7)
                        + leftPad(format(culprit.maxMs), 11))
            }
        }
        lines += hitchAndNoteLines
        lines.append("")
        lines.append(inputLine)
        lines.append("")
        let counts = [PerformanceReport.Session.Status.active, .terminated, .crashed].map { status in
            "\(sessions.filter { $0.status == status }.count) \(status)"
        }
        let concurrent = maxConcurrentSessions.map { ", at most \($0) live at once" } ?? ""
        lines.append("SESSIONS: \(sessions.count) (\(counts.joined(separator: ", ")))" + concurrent)
        if !sessions.isEmpty {
            lines.append("  " + pad("ID", 20) + pad("STATUS", 12) + pad("STARTED", 26) + "ENDED")
            for session in sessions {
                lines.append(
                    "  " + pad(session.id, 20) + pad(session.status.rawValue, 12) + pad(session.startedAt ?? "-", 26)
                        + (session.endedAt ?? "-"))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The slowest span lines with what each call was about: the spans table says how slow a
    /// name is, these say which calls were.
    private var slowestLines: [String] {
        let partial =
            input.keptEvents < input.ledgerEvents
            ? " in the newest \(input.keptEvents) of \(input.ledgerEvents) ledger lines" : ""
        let shown = slowest.count < spanLines ? "the \(slowest.count) longest of " : ""
        var lines = [
            "", "SLOWEST: \(shown)\(spanLines) span line\(spanLines == 1 ? "" : "s")\(partial), longest first",
        ]
        guard !slowest.isEmpty else { return lines }
        lines.append(
            "  " + pad("NAME", 36) + leftPad("MS", 11) + leftPad("BUDGET ms", 11) + "  " + pad("EXIT", 11) + "DETAIL")
        for span in slowest {
            // An orphaned span's duration is how long it was open at least.
            let duration = (span.exit == "orphaned" ? "≥" : "") + format(span.durationMs)
            lines.append(
                "  " + pad(span.name, 36) + leftPad(duration, 11) + leftPad(span.budgetMs.map(format) ?? "-", 11)
                    + "  " + pad(span.exit ?? "-", 11) + Self.detailCell(span.detail))
        }
        return lines
    }

    /// A detail as one table cell: control characters as spaces, at most 80 characters.
    static func detailCell(_ detail: String?) -> String {
        guard let detail, !detail.isEmpty else { return "-" }
        let flat = String(
            String.UnicodeScalarView(
                detail.unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : $0 }))
        return flat.count > 80 ? flat.prefix(79) + "…" : flat
    }

    /// The hitch and note sections (each a header line, and a table when there are any).
    private var hitchAndNoteLines: [String] {
        // Both come from the ledger lines the report keeps, which the cap may have cut.
        let partial =
            input.keptEvents < input.ledgerEvents
            ? " in the newest \(input.keptEvents) of \(input.ledgerEvents) ledger lines" : ""
        var lines = [""]
        let blamed = hitches.reduce(Int64(0)) { $0 + $1.count }
        let suppressed = hitches.reduce(Int64(0)) { $0 + $1.suppressed }
        let longest = hitches.map(\.maxMs).max() ?? 0
        lines.append("HITCHES: \(blamed) (\(suppressed) suppressed), max \(format(longest)) ms\(partial)")
        if !hitches.isEmpty {
            lines.append(
                "  " + pad("TARGET", 40) + leftPad("COUNT", 7) + leftPad("SUPPRESSED", 12) + leftPad("MAX ms", 11))
            for hitch in hitches {
                lines.append(
                    "  " + pad(hitch.target, 40) + leftPad("\(hitch.count)", 7) + leftPad("\(hitch.suppressed)", 12)
                        + leftPad(format(hitch.maxMs), 11))
            }
        }
        lines.append("")
        let written = notes.reduce(Int64(0)) { $0 + $1.count }
        let heldBack = notes.reduce(Int64(0)) { $0 &+ $1.suppressed }
        lines.append("NOTES: \(written) (\(heldBack) more held back by the note floor)\(partial)")
        if !notes.isEmpty {
            lines.append("  " + pad("NAME", 40) + leftPad("COUNT", 7) + leftPad("HELD BACK", 12))
            for note in notes {
                lines.append(
                    "  " + pad(note.name, 40) + leftPad("\(note.count)", 7) + leftPad("\(note.suppressed)", 12))
            }
        }
        return lines
    }

    /// `INPUT: 57 ledger lines (1 malformed, 1 torn tail, 1 of an unknown kind), 4 diagnostic
    /// payloads (1 unreadable)`.
    private var inputLine: String {
        func counted(_ value: Int64, _ noun: String) -> String { "\(value) \(noun)" + (value == 1 ? "" : "s") }
        return "INPUT: " + counted(input.ledgerEvents, "ledger line")
            + " (\(input.malformedLines) malformed, \(input.tornTail) torn tail, "
            + "\(input.unknownKinds) of an unknown kind), " + counted(input.diagnosticPayloads, "diagnostic payload")
            + " (\(input.invalidPayloads) unreadable)" + lossText
    }

    /// What was lost before the report could count it, with causes; empty when nothing was.
    private var lossText: String {
        var parts: [String] = []
        let dropped = input.droppedLines.values.reduce(0, &+)
        if dropped > 0 {
            let causes = input.droppedLines.filter { $0.value > 0 }.sorted { $0.key < $1.key }
                .map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            parts.append("\(dropped) ledger line\(dropped == 1 ? "" : "s") dropped (\(causes))")
        }
        if input.droppedSpanRecords > 0 {
            parts.append(
                "\(input.droppedSpanRecords) span end\(input.droppedSpanRecords == 1 ? "" : "s") span memory had no "
                    + "room for (spanNameCapacity, spanMemoryBytes)")
        }
        if input.droppedSpanProfiles > 0 {
            parts.append(
                "\(input.droppedSpanProfiles) over-budget span\(input.droppedSpanProfiles == 1 ? "" : "s") not sampled: "
                    + "every profile slot in use (64 sampled spans open at once)")
        }
        return parts.isEmpty ? "" : "\nLOST: " + parts.joined(separator: "; ")
    }

    /// The FAILED cell: failed ends, with their share of the calls when there are any.
    static func failed(_ span: Span) -> String {
        let failed = span.exits["failure"] ?? 0
        guard failed > 0, span.count > 0 else { return "\(failed)" }
        return "\(failed) (" + String(format: "%.1f", Double(failed) / Double(span.count) * 100) + " %)"
    }

    /// The summary as JSON (`schema` `perf-report-summary`, version 1), keys sorted.
    public var json: String {
        let document = ReportJSON.object([
            "schema": .string("perf-report-summary"), "schemaVersion": .int(1), "app": .string(app),
            "generatedAt": .string(generatedAt), "truncated": .bool(truncated),
            "maxConcurrentSessions": maxConcurrentSessions.map(ReportJSON.int) ?? .null,
            "spans": .array(
                spans.map { span in
                    var members: [String: ReportJSON] = [
                        "name": .string(span.name), "count": .int(span.count), "p50Ms": .double(span.p50Ms),
                        "p95Ms": .double(span.p95Ms), "p99Ms": .double(span.p99Ms), "maxMs": .double(span.maxMs),
                        "budgetMs": span.budgetMs.map(ReportJSON.double) ?? .null,
                        "overBudget": .int(span.overBudget), "source": .string(span.source.rawValue),
                    ]
                    if let lines = span.overBudgetLines { members["overBudgetLines"] = .int(lines) }
                    if !span.exits.isEmpty { members["exits"] = .object(span.exits.mapValues(ReportJSON.int)) }
                    if let cause = span.topCause {
                        members["topCause"] = .object([
                            "wait": .optional(cause.wait), "culprit": .optional(cause.culprit),
                            "samples": .int(cause.samples), "totalSamples": .int(cause.totalSamples),
                            "percent": .int(Int64(cause.percent)), "text": .string(cause.description),
                        ])
                    }
                    if let orphaned = span.orphaned {
                        members["orphaned"] = .int(orphaned)
                        members["orphanedLowerMs"] = span.orphanedLowerMs.map(ReportJSON.double) ?? .null
                    }
                    return .object(members)
                }),
            "hangs": .object([
                "count": .int(hangCount), "fatal": .int(fatalHangs), "suppressed": .int(suppressedHangs),
                "maxMs": .double(hangMaxMs),
                "culprits": .array(
                    culprits.map {
                        .object([
                            "culprit": .string($0.culprit), "function": .string(FunctionName.readable($0.culprit)),
                            "count": .int($0.count), "maxMs": .double($0.maxMs),
                        ])
                    }),
            ]),
            "hitches": .array(
                hitches.map {
                    .object([
                        "target": .string($0.target), "count": .int($0.count), "suppressed": .int($0.suppressed),
                        "maxMs": .double($0.maxMs),
                    ])
                }),
            "slowest": .array(
                slowest.map {
                    .object([
                        "name": .string($0.name), "durationMs": .double($0.durationMs),
                        "budgetMs": $0.budgetMs.map(ReportJSON.double) ?? .null, "exit": .optional($0.exit),
                        "detail": .optional($0.detail), "endedAt": .string($0.endedAt),
                    ])
                }),
            "spanLines": .int(Int64(spanLines)),
            "notes": .array(
                notes.map {
                    .object(["name": .string($0.name), "count": .int($0.count), "suppressed": .int($0.suppressed)])
                }),
            "input": .object([
                "ledgerEvents": .int(input.ledgerEvents), "keptEvents": .int(input.keptEvents),
                "malformedLines": .int(input.malformedLines), "tornTail": .int(input.tornTail),
                "unknownKinds": .int(input.unknownKinds), "diagnosticPayloads": .int(input.diagnosticPayloads),
                "invalidPayloads": .int(input.invalidPayloads),
                "droppedLines": .object(input.droppedLines.mapValues(ReportJSON.int)),
                "droppedSpanRecords": .int(input.droppedSpanRecords),
                "droppedSpanProfiles": .int(input.droppedSpanProfiles),
            ]),
            "sessions": .array(
                sessions.map {
                    .object([
                        "id": .string($0.id), "status": .string($0.status.rawValue),
                        "startedAt": .optional($0.startedAt), "endedAt": .optional($0.endedAt),
                    ])
                }),
        ])
        return String(decoding: document.bytes, as: UTF8.self) + "\n"
    }

    /// `3 orphaned (open ≥ 5.2 s)`, or `(open for an unknown time)` when no line gave a bound.
    static func orphans(_ span: Span) -> String {
        let open = span.orphanedLowerMs.map { "open ≥ " + duration(ms: $0) } ?? "open for an unknown time"
        return "\(span.orphaned ?? 0) orphaned (\(open))"
    }

    /// A duration in the unit that reads best: `25 ns`, `830 µs`, `850.0 ms`, `5.2 s`,
    /// `12.5 min`, `3.0 h`.
    static func duration(ms: Double) -> String {
        switch ms {
        case ..<0: String(format: "%.1f ms", ms)
        case ..<0.001: String(format: "%.0f ns", ms * 1_000_000)
        case ..<1: String(format: "%.0f µs", ms * 1_000)
        case ..<1_000: String(format: "%.1f ms", ms)
        case ..<120_000: String(format: "%.1f s", ms / 1_000)
        case ..<7_200_000: String(format: "%.1f min", ms / 60_000)
        default: String(format: "%.1f h", ms / 3_600_000)
        }
    }

    private func row(_ cells: [String]) -> String {
        "  " + pad(cells[0], 36) + cells.dropFirst().map { leftPad($0, 11) }.joined()
    }

    private func format(_ ms: Double) -> String { Self.milliseconds(ms) }

    /// A figure of a milliseconds column: one decimal from 1 ms up (and for 0), below that
    /// three significant digits down to the nanosecond, so a 25 ns span reads `0.000025`, not
    /// `0.0`: `1234.5`, `0.5`, `0.025`, `0.000512`.
    static func milliseconds(_ ms: Double) -> String {
        let magnitude = abs(ms)
        guard ms.isFinite, magnitude < 1, magnitude >= 0.0000005 else { return String(format: "%.1f", ms) }
        let decimals = min(6, Int((-log10(magnitude)).rounded(.up)) + 2)
        var text = String(format: "%.\(decimals)f", ms)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
