// `perf-report compare BASE HEAD`: every span's change between two reports under the same floors
// as a budget check's regressions, no budgets file needed.
import Perf

/// Compares two reports span by span.
///
/// ```swift
/// let verdict = BudgetComparison().compare(base: base, head: head)
/// print(verdict.comparisonTable)
/// ```
public struct BudgetComparison: Sendable {
    /// The floors a change must exceed (the policy's `stat` is ignored: ``stats`` are compared).
    public var policy: Budgets.RegressionPolicy
    /// The statistics compared for every span.
    public var stats: [BudgetMetric]
    /// The minimum samples of the percentiles.
    public var minSamples: Budgets.MinimumSamples
    /// Whether an improvement fails the comparison.
    public var failOnImprovement: Bool

    /// Creates a comparison: p50 and p95, +15 % and +2 ms floors by default.
    public init(
        policy: Budgets.RegressionPolicy = Budgets.RegressionPolicy(), stats: [BudgetMetric] = [.p50, .p95],
        minSamples: Budgets.MinimumSamples = .automatic, failOnImprovement: Bool = false
    ) {
        self.policy = policy
        self.stats = stats
        self.minSamples = minSamples
        self.failOnImprovement = failOnImprovement
    }

    /// Every span's change: regressions fail, improvements show, spans new or gone are noted.
    public func compare(base: ReportFigures, head: ReportFigures) -> BudgetVerdict {
        var defaults = Budgets.Defaults()
        defaults.minSamples = minSamples
        let check = BudgetCheck(budgets: Budgets(defaults: defaults))
        var checks: [BudgetVerdict.Check] = []
        for name in Set(base.spans.keys).union(head.spans.keys).sorted() {
            guard let current = head.spans[name] else {
                checks.append(
                    BudgetVerdict.Check(
                        subject: name, metric: "", kind: .presence, status: .missing, level: .warn, unit: .count,
                        baseline: base.spans[name].map { Double($0.count) },
                        expectation: "present, as in the base report", site: base.spans[name]?.site))
                continue
            }
            for stat in stats {
                var statPolicy = policy
                statPolicy.stat = stat
                if stat.unit != policy.minDelta.unit { statPolicy.minDelta = BudgetQuantity(0, stat.unit) }
                checks.append(
                    check.regression(
                        name, policy: statPolicy, current: current, baseline: base.spans[name],
                        minSamples: minSamples, rule: nil))
            }
        }
        checks += check.sectionChecks("hangs", [:], Budgets.hangMetrics, head.hangs, base.hangs)
        return BudgetVerdict(
            checks: checks, warnings: BudgetCheck.environmentWarnings(head, base), reports: [head.path],
            baseline: base.path, failOnImprovement: failOnImprovement)
    }
}

extension BudgetVerdict {
    /// A comparison as a table, one row per span and statistic, sorted by span:
    /// `SPAN  STAT  BASE  HEAD  CHANGE  N  STATUS`.
    public var comparisonTable: String {
        var rows = [["SPAN", "STAT", "BASE", "HEAD", "CHANGE", "N", "STATUS"]]
        for check in checks {
            rows.append([
                check.subject, check.metric.isEmpty ? "-" : check.metric, Self.value(check.baseline, check.unit),
                check.kind == .presence ? "-" : Self.value(check.current, check.unit), Self.change(check) ?? "-",
                check.samples.map(String.init) ?? "-", Self.symbol(check.status) + " " + check.status.rawValue,
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                .trimmingSuffixSpaces()
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
