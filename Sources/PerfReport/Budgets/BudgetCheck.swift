// Applies a budgets file to a report's figures (and a baseline's): absolute limits, presence,
// minimum samples, regressions; the pure heart of `perf-report check`.
import Perf

/// Checks a report against budgets, optionally against a baseline.
///
/// ```swift
/// let check = BudgetCheck(budgets: try Budgets(contentsOf: budgetsURL))
/// let verdict = try check.run(current: try ReportFigures(contentsOf: reportURL))
/// exit(verdict.exitCode)
/// ```
///
/// - Note: Percentiles are judged only on enough samples (``BudgetMetric/automaticMinimumSamples``);
///   a regression must exceed both the relative and the absolute floor, except a count that
///   rises from zero, which always regresses.
public struct BudgetCheck: Sendable {
    /// Switches of `perf-report check`.
    public struct Options: Sendable, Equatable {
        /// An improvement beyond the floors fails the check (`--fail-on-improvement`).
        public var failOnImprovement: Bool
        /// Check absolute time budgets on a debug build (`--allow-debug`).
        public var allowDebug: Bool

        /// Creates options; both off by default.
        public init(failOnImprovement: Bool = false, allowDebug: Bool = false) {
            self.failOnImprovement = failOnImprovement
            self.allowDebug = allowDebug
        }
    }

    /// The budgets applied.
    public var budgets: Budgets
    /// The switches.
    public var options: Options

    /// Creates a check.
    public init(budgets: Budgets, options: Options = Options()) {
        self.budgets = budgets
        self.options = options
    }

    /// Runs every check.
    ///
    /// - Throws: ``BudgetsError`` when a glob rule matches no span of the report (a typo would
    ///   otherwise turn the gate off), or when absolute time budgets meet a debug build without
    ///   ``Options/allowDebug``.
    public func run(current: ReportFigures, baseline: ReportFigures? = nil) throws(BudgetsError) -> BudgetVerdict {
        try validate(against: current)
        var checks: [BudgetVerdict.Check] = []
        for (index, rule) in budgets.spans.enumerated()
        where !Budgets.isGlob(rule.match) && current.spans[rule.match] == nil {
            let level = rule.onMissing ?? budgets.defaults.onMissing
            guard level != .off else { continue }
            checks.append(
                BudgetVerdict.Check(
                    subject: rule.match, metric: "", kind: .presence, status: .missing, level: level, unit: .count,
                    expectation: "present in the report", rule: rule.label(index),
                    message: rule.message, suggestions: Self.closest(to: rule.match, among: current.spans.keys)))
        }
        for name in current.spans.keys.sorted() {
            checks += spanChecks(
                name, current.spans[name]!, baseline: baseline?.spans[name], hasBaseline: baseline != nil)
        }
        checks += sectionChecks("hangs", budgets.hangs, Budgets.hangMetrics, current.hangs, baseline?.hangs)
        checks += sectionChecks("ledger", budgets.ledger, Budgets.ledgerMetrics, current.ledger, baseline?.ledger)
        if baseline == nil, budgets.requiresBaseline {
            checks.append(
                BudgetVerdict.Check(
                    subject: "baseline", metric: "", kind: .presence, status: .missing, level: .error, unit: .count,
                    expectation: "a baseline report (--baseline), which the budgets require"))
        }
        return BudgetVerdict(
            checks: checks, warnings: baseline.map { Self.environmentWarnings(current, $0) } ?? [],
            reports: current.path.isEmpty ? [] : [current.path], baseline: baseline?.path,
            failOnImprovement: options.failOnImprovement)
    }

    /// Refuses what cannot be checked honestly: a glob rule that matches nothing, absolute time
    /// budgets on a debug build.
    func validate(against current: ReportFigures) throws(BudgetsError) {
        for (index, rule) in budgets.spans.enumerated() where Budgets.isGlob(rule.match) {
            guard current.spans.keys.contains(where: { Budgets.matches(rule.match, $0) }) else {
                throw BudgetsError(
                    .invalidBudgets, path: budgets.path, rule: rule.label(index),
                    "matches no span of '\(current.path)'; fix the pattern or remove the rule")
            }
        }
        guard current.environment["buildConfiguration"] == "debug", !options.allowDebug else { return }
        for (index, rule) in budgets.spans.enumerated() {
            for (metric, limit) in rule.limits.sorted(by: { $0.key < $1.key })
            where metric.unit == .milliseconds && (limit.level ?? rule.level ?? budgets.defaults.level) != .off {
                throw BudgetsError(
                    .debugBuild, path: current.path, rule: rule.label(index),
                    "it comes from a debug build, and \(rule.label(index)) sets an absolute time budget "
                        + "(\(metric.rawValue)); measure a release build (swift build -c release) or pass "
                        + "--allow-debug")
            }
        }
        for (name, limit) in budgets.hangs.sorted(by: { $0.key < $1.key })
        where Budgets.hangMetrics[name] == .milliseconds && (limit.level ?? budgets.defaults.level) != .off {
            throw BudgetsError(
                .debugBuild, path: current.path, rule: "hangs",
                "it comes from a debug build, and hangs.\(name) is an absolute time budget; measure a release "
                    + "build (swift build -c release) or pass --allow-debug")
        }
    }

    /// The checks of one span: its limits, merged rule by rule, then its regression.
    func spanChecks(
        _ name: String, _ span: ReportFigures.Span, baseline: ReportFigures.Span?, hasBaseline: Bool
    ) -> [BudgetVerdict.Check] {
        let matching = budgets.spans.enumerated().filter { Budgets.matches($0.element.match, name) }
        guard !matching.isEmpty else {
            return [
                BudgetVerdict.Check(
                    subject: name, metric: "", kind: .presence, status: .unbudgeted, level: .off, unit: .count,
                    current: Double(span.count), samples: span.count, expectation: "no rule matches",
                    site: span.site)
            ]
        }
        // Later rules override earlier ones per metric.
        var effective: [BudgetMetric: (limit: Budgets.Limit, index: Int, rule: Budgets.SpanRule)] = [:]
        var minSamples = budgets.defaults.minSamples
        var policy = budgets.defaults.regression
        for (index, rule) in matching {
            for (metric, limit) in rule.limits { effective[metric] = (limit, index, rule) }
            if let override = rule.minSamples { minSamples = override }
            if let override = rule.regression { policy = override }
        }
        var checks: [BudgetVerdict.Check] = []
        for metric in effective.keys.sorted() {
            let (limit, index, rule) = effective[metric]!
            let level = limit.level ?? rule.level ?? budgets.defaults.level
            guard level != .off else { continue }
            var check = BudgetVerdict.Check(
                subject: name, metric: metric.rawValue, kind: .limit, status: .pass, level: level,
                unit: metric.unit,
                current: span.values[metric] ?? 0, baseline: baseline?.values[metric], samples: span.count,
                expectation: Self.expectation(limit), rule: rule.label(index), site: span.site,
                message: limit.message ?? rule.message)
            let needed = minSamples.needed(for: metric)
            if metric.quantile != nil, span.count < needed {
                check.status = .insufficient
                check.level = budgets.defaults.onInsufficient
                check.expectation += " (needs n ≥ \(needed))"
            } else {
                check.status = Self.within(check.current ?? 0, limit) ? .pass : (level == .error ? .fail : .warn)
            }
            checks.append(check)
        }
        if hasBaseline, policy.level != .off {
            let rule = matching.last.map { $0.element.label($0.offset) }
            checks.append(
                regression(
                    name, policy: policy, current: span, baseline: baseline, minSamples: minSamples, rule: rule))
        }
        return checks
    }

    /// Whether `value` is within `limit`.
    static func within(_ value: Double, _ limit: Budgets.Limit) -> Bool {
        if let max = limit.max, value > max.value { return false }
        if let min = limit.min, value < min.value { return false }
        return true
    }

    /// The limit in words: `≤ 800ms`, `≥ 5`, `in [1ms, 5ms]`.
    static func expectation(_ limit: Budgets.Limit) -> String {
        switch (limit.min, limit.max) {
        case (let min?, let max?): return "in [\(min), \(max)]"
        case (let min?, nil): return "≥ \(min)"
        case (nil, let max?): return "≤ \(max)"
        case (nil, nil): return "any"
        }
    }

    /// One warning per host key that differs from the baseline's.
    static func environmentWarnings(_ current: ReportFigures, _ baseline: ReportFigures) -> [String] {
        ReportFigures.environmentKeys.compactMap { key in
            let now = current.environment[key] ?? "unknown"
            let then = baseline.environment[key] ?? "unknown"
            guard now != then else { return nil }
            return "environment differs from the baseline: \(key) is '\(now)', the baseline's is '\(then)'; "
                + "timings may not be comparable (measure base and head in the same job)"
        }
    }
}

extension Budgets {
    /// Whether some policy demands a baseline.
    var requiresBaseline: Bool {
        defaults.regression.requireBaseline || spans.contains { $0.regression?.requireBaseline == true }
    }
}
