// The verdict as Markdown for a pull request or $GITHUB_STEP_SUMMARY: what needs attention in a
// table first, passes folded away.
import Perf

extension BudgetVerdict {
    /// The verdict as Markdown.
    public func markdown(command: String = "check") -> String {
        var text = "## perf-report \(command): \(Self.symbol(outcomeStatus)) \(outcome.rawValue) (exit \(exitCode))\n\n"
        let attention = orderedChecks.filter { $0.status != .pass && $0.status != .unbudgeted }
        if attention.isEmpty {
            text += "No failures or warnings.\n\n"
        } else {
            text += Self.table(attention) + "\n"
        }
        for warning in warnings { text += "> ⚠ " + Self.cell(warning) + "\n\n" }
        let passed = checks.filter { $0.status == .pass }
        if !passed.isEmpty {
            text += "<details><summary>\(passed.count) check\(passed.count == 1 ? "" : "s") passed</summary>\n\n"
            text += Self.table(passed) + "\n</details>\n\n"
        }
        let unbudgeted = checks.filter { $0.status == .unbudgeted }.map { "`" + Self.cell($0.subject) + "`" }
        if !unbudgeted.isEmpty { text += "Unbudgeted spans: " + unbudgeted.joined(separator: ", ") + "\n" }
        return text
    }

    /// The status whose mark heads the summary.
    var outcomeStatus: Status {
        switch outcome {
        case .pass: return .pass
        case .warn: return .warn
        case .fail: return .fail
        case .incomplete: return .missing
        }
    }

    static func table(_ checks: [Check]) -> String {
        var text = "| | Check | Level | Expected | Found | n | Baseline | Change |\n"
        text += "|---|---|---|---|---|---|---|---|\n"
        for check in checks {
            var found = check.kind == .presence ? "nothing" : value(check.current, check.unit)
            if check.kind == .presence, let hint = didYouMean(check) { found += " (" + cell(hint) + ")" }
            let cells = [
                symbol(check.status) + " " + check.status.rawValue, "`" + cell(title(check)) + "`",
                check.level.rawValue,
                cell(check.expectation), found, check.samples.map(String.init) ?? "",
                check.baseline.map { value($0, check.unit) } ?? "", change(check) ?? "",
            ]
            text += "| " + cells.joined(separator: " | ") + " |\n"
            if let message = check.message, check.status != .pass {
                text += "| | ↳ " + cell(message) + " | | | | | | |\n"
            }
        }
        return text
    }

    /// Text safe inside a table cell.
    static func cell(_ text: String) -> String {
        text.replacingAll("|", "\\|").replacingAll("\n", " ").replacingAll("`", "'")
    }
}
