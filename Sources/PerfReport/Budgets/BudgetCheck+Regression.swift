// Regressions against a baseline: a change counts only past both floors (relative and absolute),
// on enough samples on both sides; a count that rises from zero always counts.
import Perf

extension BudgetCheck {
    /// One span's regression check under `policy`.
    func regression(
        _ name: String, policy: Budgets.RegressionPolicy, current: ReportFigures.Span,
        baseline: ReportFigures.Span?, minSamples: Budgets.MinimumSamples, rule: String?
    ) -> BudgetVerdict.Check {
        let stat = policy.stat
        var check = BudgetVerdict.Check(
            subject: name, metric: stat.rawValue, kind: .regression, status: .pass, level: policy.level,
            unit: stat.unit, current: current.values[stat] ?? 0, baseline: baseline?.values[stat],
            samples: current.count, expectation: Self.regressionExpectation(policy), rule: rule, site: current.site)
        let needed = minSamples.needed(for: stat)
        if stat.unit == .count, (check.baseline ?? 0) == 0 {
            // A count from zero (or from a span the baseline never saw) is news however small.
            check.baseline = 0
            check.expectation = "0, as in the baseline"
            check.status = (check.current ?? 0) > 0 ? Self.breachStatus(policy.level) : .pass
            return check
        }
        guard let baseline else {
            check.status = .insufficient
            check.level = budgets.defaults.onInsufficient
            check.expectation = "a baseline value (the span is new since the baseline)"
            return check
        }
        guard current.count >= needed, baseline.count >= needed else {
            check.status = .insufficient
            check.level = budgets.defaults.onInsufficient
            check.expectation += " (needs n ≥ \(needed) in both; the baseline has \(baseline.count))"
            return check
        }
        check.status = Self.change(
            current: check.current ?? 0, baseline: check.baseline ?? 0, policy: policy)
        if check.status == .fail { check.status = Self.breachStatus(policy.level) }
        return check
    }

    /// `fail`, `improved` or `pass` for a change, before the level is applied.
    static func change(current: Double, baseline: Double, policy: Budgets.RegressionPolicy)
        -> BudgetVerdict.Status
    {
        let delta = current - baseline
        let relative = baseline == 0 ? (delta == 0 ? 0 : Double.infinity) : abs(delta) / baseline * 100
        guard abs(delta) > policy.minDelta.value, relative > policy.maxIncreasePercent else { return .pass }
        return delta > 0 ? .fail : .improved
    }

    static func breachStatus(_ level: Budgets.Level) -> BudgetVerdict.Status {
        level == .error ? .fail : .warn
    }

    static func regressionExpectation(_ policy: Budgets.RegressionPolicy) -> String {
        "within +\(BudgetQuantity.trimmed(policy.maxIncreasePercent))% or +\(policy.minDelta) of the baseline"
    }

    /// Hang and ledger limits, and counts that rose from zero since the baseline.
    func sectionChecks(
        _ section: String, _ limits: [String: Budgets.Limit], _ metrics: [String: BudgetQuantity.Unit],
        _ current: [String: Double], _ baseline: [String: Double]?
    ) -> [BudgetVerdict.Check] {
        var checks: [BudgetVerdict.Check] = []
        for (metric, limit) in limits.sorted(by: { $0.key < $1.key }) {
            let level = limit.level ?? budgets.defaults.level
            guard level != .off else { continue }
            let value = current[metric] ?? 0
            checks.append(
                BudgetVerdict.Check(
                    subject: section, metric: metric, kind: .limit,
                    status: Self.within(value, limit) ? .pass : Self.breachStatus(level), level: level,
                    unit: metrics[metric] ?? .count, current: value, baseline: baseline?[metric],
                    expectation: Self.expectation(limit), rule: section, message: limit.message))
        }
        // Hangs that appear where the baseline had none are a regression whatever the limits say.
        let policy = budgets.defaults.regression
        if section == "hangs", let baseline, policy.level != .off {
            for metric in ["count", "fatal"] where (baseline[metric] ?? 0) == 0 && (current[metric] ?? 0) > 0 {
                checks.append(
                    BudgetVerdict.Check(
                        subject: section, metric: metric, kind: .regression, status: Self.breachStatus(policy.level),
                        level: policy.level, unit: .count, current: current[metric], baseline: 0,
                        expectation: "0, as in the baseline", rule: "defaults.regression"))
            }
        }
        return checks
    }
}
