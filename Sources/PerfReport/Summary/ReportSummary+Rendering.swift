// The two renderings of a report summary: an aligned text table and a versioned JSON document.
import Perf
import Foundation

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
            lines.append(row(["NAME", "COUNT", "P50 ms", "P95 ms", "P99 ms", "MAX ms", "BUDGET ms", "OVER"]))
            for span in spans {
                let name = span.source == .ledger ? span.name + " *" : span.name
                lines.append(
                    row([
                        name, "\(span.count)", format(span.p50Ms), format(span.p95Ms), format(span.p99Ms),
                        format(span.maxMs), span.budgetMs.map(format) ?? "-", "\(span.overBudget)",
                    ]))
            }
            if spans.contains(where: { $0.source == .ledger }) {
                lines.append("  * from ledger lines only (slow calls); no histogram snapshot held this span")
            }
        }
        lines.append("")
        lines.append(
            "HANGS: \(hangCount) (\(fatalHangs) fatal, \(suppressedHangs) suppressed), max \(format(hangMaxMs)) ms")
        if !culprits.isEmpty {
            lines.append("  " + pad("CULPRIT", 60) + leftPad("COUNT", 7) + leftPad("MAX ms", 11))
            for culprit in culprits {
                lines.append(
                    "  " + pad(culprit.culprit, 60) + leftPad("\(culprit.count)", 7)
                        + leftPad(format(culprit.maxMs), 11))
            }
        }
        lines.append("")
        let counts = [PerformanceReport.Session.Status.active, .terminated, .crashed].map { status in
            "\(sessions.filter { $0.status == status }.count) \(status)"
        }
        lines.append("SESSIONS: \(sessions.count) (\(counts.joined(separator: ", ")))")
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

    /// The summary as JSON (`schema` `perf-report-summary`, version 1), keys sorted.
    public var json: String {
        let document = ReportJSON.object([
            "schema": .string("perf-report-summary"), "schemaVersion": .int(1), "app": .string(app),
            "generatedAt": .string(generatedAt), "truncated": .bool(truncated),
            "spans": .array(
                spans.map { span in
                    .object([
                        "name": .string(span.name), "count": .int(span.count), "p50Ms": .double(span.p50Ms),
                        "p95Ms": .double(span.p95Ms), "p99Ms": .double(span.p99Ms), "maxMs": .double(span.maxMs),
                        "budgetMs": span.budgetMs.map(ReportJSON.double) ?? .null,
                        "overBudget": .int(span.overBudget), "source": .string(span.source.rawValue),
                    ])
                }),
            "hangs": .object([
                "count": .int(hangCount), "fatal": .int(fatalHangs), "suppressed": .int(suppressedHangs),
                "maxMs": .double(hangMaxMs),
                "culprits": .array(
                    culprits.map {
                        .object(["culprit": .string($0.culprit), "count": .int($0.count), "maxMs": .double($0.maxMs)])
                    }),
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

    private func row(_ cells: [String]) -> String {
        "  " + pad(cells[0], 36) + cells.dropFirst().map { leftPad($0, 11) }.joined()
    }

    private func format(_ ms: Double) -> String { String(format: "%.1f", ms) }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
