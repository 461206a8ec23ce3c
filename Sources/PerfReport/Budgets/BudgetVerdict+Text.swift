import Foundation
// The verdict as lines for a terminal (stderr of `perf-report check`):
// `✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%`.
import Perf

extension BudgetVerdict {
    /// The order checks are listed in: what needs attention first.
    static let statusOrder: [Status] = [.fail, .missing, .insufficient, .warn, .improved, .pass, .unbudgeted]

    /// A status's mark in text and Markdown.
    public static func symbol(_ status: Status) -> String {
        switch status {
        case .pass: return "✔"
        case .warn: return "⚠"
        case .fail: return "✘"
        case .improved: return "↓"
        case .insufficient: return "?"
        case .missing: return "∅"
        case .unbudgeted: return "·"
        }
    }

    /// Checks in attention order (stable within a status).
    public var orderedChecks: [Check] {
        Self.statusOrder.flatMap { status in checks.filter { $0.status == status } }
    }

    /// One line for one check, e.g.
    /// `✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%`.
    public static func line(_ check: Check) -> String {
        var text = symbol(check.status) + " " + title(check)
        if check.status == .unbudgeted {
            return text + ": unbudgeted" + (check.samples.map { " (n=\($0))" } ?? "")
        }
        text += " (\(check.level.rawValue)): expected \(check.expectation), found "
        if check.kind == .presence {
            text += "nothing"
            if let hint = didYouMean(check) { text += " · " + hint }
        } else {
            text += value(check.current, check.unit)
            if let samples = check.samples { text += " (n=\(samples))" }
        }
        if let baseline = check.baseline {
            text += " · baseline " + value(baseline, check.unit)
            if let change = change(check) { text += " · " + change }
        }
        if let message = check.message, check.status != .pass { text += " — " + message }
        return text
    }

    /// `did you mean api.get?`, `did you mean api.get or api.gets?`: a missing span's nearest
    /// names in the report; nil when there are none.
    public static func didYouMean(_ check: Check) -> String? {
        guard !check.suggestions.isEmpty else { return nil }
        var names = check.suggestions
        let last = names.removeLast()
        return "did you mean " + (names.isEmpty ? last : names.joined(separator: ", ") + " or " + last) + "?"
    }

    /// `api.get p95`, `api.get p50 regression`, `hangs count`.
    public static func title(_ check: Check) -> String {
        var title = check.subject
        if !check.metric.isEmpty { title += " " + check.metric }
        if check.kind == .regression { title += " regression" }
        return title
    }

    /// A value in its unit, `912ms`, `1.2s`, `12.5%`, `240`; `-` when absent.
    public static func value(_ value: Double?, _ unit: BudgetQuantity.Unit) -> String {
        value.map { BudgetQuantity.format($0, unit) } ?? "-"
    }

    /// The change from the baseline: `+14.3%`, or the absolute change from a zero baseline.
    public static func change(_ check: Check) -> String? {
        if let percent = check.deltaPercent { return String(format: "%+.1f%%", percent) }
        guard let delta = check.delta else { return nil }
        return (delta >= 0 ? "+" : "") + value(delta, check.unit)
    }

    /// The closing line: `perf-report check: fail (2 fail, 1 warn, 14 pass) → exit 1`.
    public func summaryLine(command: String) -> String {
        let counts = Self.statusOrder.compactMap { status in tally[status].map { "\($0) \(status.rawValue)" } }
        return "perf-report \(command): \(outcome.rawValue) ("
            + (counts.isEmpty ? "no checks" : counts.joined(separator: ", "))
            + ") → exit \(exitCode)"
    }

    /// The whole verdict for a terminal: every check that is not a pass on its own line, passes
    /// and unbudgeted spans counted, warnings, and the closing line.
    public func text(command: String = "check") -> String {
        var lines = orderedChecks.filter { $0.status != .pass && $0.status != .unbudgeted }.map(Self.line)
        if let passed = tally[.pass] { lines.append("✔ \(passed) check\(passed == 1 ? "" : "s") passed") }
        let unbudgeted = checks.filter { $0.status == .unbudgeted }.map(\.subject)
        if !unbudgeted.isEmpty { lines.append("· unbudgeted: " + unbudgeted.joined(separator: ", ")) }
        lines += warnings.map { "⚠ " + $0 }
        lines.append(summaryLine(command: command))
        return lines.joined(separator: "\n") + "\n"
    }
}
