// The result of a budget check or a comparison: every check with its numbers, and the verdict and
// exit code they add up to. Every output format (text, JSON, GitHub, JUnit, Markdown) renders it.
import Perf

/// Every check of one `perf-report check` or `compare`, and what they add up to.
public struct BudgetVerdict: Sendable, Equatable {
    /// One check's outcome.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// Within its limit, or no regression.
        case pass
        /// Breached, or regressed, at level `warn`.
        case warn
        /// Breached, or regressed, at level `error`.
        case fail
        /// Better than the baseline beyond both floors.
        case improved
        /// Too few samples for the statistic to mean anything.
        case insufficient
        /// A budgeted span (or a required baseline) is absent.
        case missing
        /// A span in the report that no rule budgets.
        case unbudgeted
    }

    /// What a check compared.
    public enum Kind: String, Sendable, Equatable {
        /// A value against an absolute limit.
        case limit
        /// A value against the baseline's.
        case regression
        /// Whether a budgeted span (or the baseline) is there at all.
        case presence
    }

    /// What the checks add up to.
    public enum Outcome: String, Sendable, Equatable {
        /// Every check passed.
        case pass
        /// Passed, with warnings (exit 0).
        case warn
        /// A budget breached or a regression found (exit 1).
        case fail
        /// Data the budgets demand is missing (exit 4).
        case incomplete
    }

    /// One check.
    public struct Check: Sendable, Equatable {
        /// The span name, or `hangs`, `ledger`, `baseline`.
        public var subject: String
        /// The metric (`p95`, `count`, `maxMs`, …); empty for presence checks.
        public var metric: String
        /// What was compared.
        public var kind: Kind
        /// The outcome.
        public var status: Status
        /// The level the budget gave it.
        public var level: Budgets.Level
        /// The unit of ``current`` and ``baseline``.
        public var unit: BudgetQuantity.Unit
        /// The value in this report, when there is one.
        public var current: Double?
        /// The baseline's value, when a baseline has one.
        public var baseline: Double?
        /// The sample size (the span's count).
        public var samples: Int64?
        /// The limit in words: `≤ 800ms`, `in [1ms, 5ms]`, `within +15% or +2ms of the baseline`.
        public var expectation: String
        /// The rule that set the limit: `spans[1] ("api.*")`.
        public var rule: String?
        /// The span's call site, `Module/File.swift:88`.
        public var site: String?
        /// The budget's message, shown on a breach.
        public var message: String?
        /// For a `missing` span: the report's span names closest to it (a typo in `match`),
        /// nearest first; empty when none is close.
        public var suggestions: [String]

        /// Creates a check.
        public init(
            subject: String, metric: String, kind: Kind, status: Status, level: Budgets.Level,
            unit: BudgetQuantity.Unit, current: Double? = nil, baseline: Double? = nil, samples: Int64? = nil,
            expectation: String, rule: String? = nil, site: String? = nil, message: String? = nil,
            suggestions: [String] = []
        ) {
            self.subject = subject
            self.metric = metric
            self.kind = kind
            self.status = status
            self.level = level
            self.unit = unit
            self.current = current
            self.baseline = baseline
            self.samples = samples
            self.expectation = expectation
            self.rule = rule
            self.site = site
            self.message = message
            self.suggestions = suggestions
        }

        /// `current - baseline`.
        public var delta: Double? {
            guard let current, let baseline else { return nil }
            return current - baseline
        }

        /// The change relative to the baseline, in percent; nil from a zero baseline.
        public var deltaPercent: Double? {
            guard let delta, let baseline, baseline != 0 else { return nil }
            return delta / baseline * 100
        }
    }

    /// Every check: spans by name, then hangs and ledger.
    public var checks: [Check]
    /// Things the reader should know that are not checks (environment mismatch).
    public var warnings: [String]
    /// The report(s) checked.
    public var reports: [String]
    /// The baseline, when there was one.
    public var baseline: String?
    /// Whether an improvement fails the check (`--fail-on-improvement`).
    public var failOnImprovement: Bool

    /// Creates a verdict.
    public init(
        checks: [Check], warnings: [String] = [], reports: [String], baseline: String? = nil,
        failOnImprovement: Bool = false
    ) {
        self.checks = checks
        self.warnings = warnings
        self.reports = reports
        self.baseline = baseline
        self.failOnImprovement = failOnImprovement
    }

    /// Whether this check fails the build (exit 1).
    public func breaches(_ check: Check) -> Bool {
        check.status == .fail || (check.status == .improved && failOnImprovement)
    }

    /// Whether this check makes the data incomplete (exit 4).
    public func isIncomplete(_ check: Check) -> Bool {
        (check.status == .missing || check.status == .insufficient) && check.level == .error
    }

    /// What the checks add up to: a breach wins over incomplete data, which wins over warnings.
    public var outcome: Outcome {
        if checks.contains(where: breaches) { return .fail }
        if checks.contains(where: isIncomplete) { return .incomplete }
        let worrying: Set<Status> = [.warn, .missing, .insufficient]
        return checks.contains(where: { worrying.contains($0.status) }) || !warnings.isEmpty ? .warn : .pass
    }

    /// The exit status of the contract: 0 pass, 1 breach or regression, 4 incomplete data.
    public var exitCode: Int32 {
        switch outcome {
        case .pass, .warn: return 0
        case .fail: return 1
        case .incomplete: return 4
        }
    }

    /// Checks per status.
    public var tally: [Status: Int] { checks.reduce(into: [:]) { $0[$1.status, default: 0] += 1 } }
}
