// The budgets file (`perf-budgets.json`) as values: defaults, ordered span rules, hang and ledger
// limits. Parsing lives in Budgets+Parsing.swift; applying them in BudgetCheck.swift.
import Perf

/// A parsed budgets file.
///
/// ```swift
/// let budgets = try Budgets(contentsOf: URL(fileURLWithPath: "perf-budgets.json"))
/// let verdict = try BudgetCheck(budgets: budgets).run(current: report)
/// ```
///
/// Span rules are ordered: for each span and each metric, the last rule that matches the span
/// and limits that metric wins, so a general `api.*` rule can be refined for `api.get`.
public struct Budgets: Sendable, Equatable {
    /// How seriously a breach is taken.
    public enum Level: String, Sendable, Equatable, CaseIterable {
        /// Not checked.
        case off
        /// Reported; the check still passes (exit 0).
        case warn
        /// Fails the check (exit 1; exit 4 for missing or insufficient data).
        case error
    }

    /// A limit on one metric.
    public struct Limit: Sendable, Equatable {
        /// The lowest acceptable value, if any.
        public var min: BudgetQuantity?
        /// The highest acceptable value, if any.
        public var max: BudgetQuantity?
        /// The level; nil inherits the rule's, then the defaults'.
        public var level: Level?
        /// Shown when the limit is breached.
        public var message: String?

        /// Creates a limit.
        public init(
            min: BudgetQuantity? = nil, max: BudgetQuantity? = nil, level: Level? = nil, message: String? = nil
        ) {
            self.min = min
            self.max = max
            self.level = level
            self.message = message
        }
    }

    /// How many calls a percentile needs before it is judged.
    public enum MinimumSamples: Sendable, Equatable {
        /// About five observations beyond the quantile (``BudgetMetric/automaticMinimumSamples``).
        case automatic
        /// At least this many calls, whatever the percentile.
        case atLeast(Int64)

        /// The calls `metric` needs: 1 for the metrics that are facts rather than estimates.
        public func needed(for metric: BudgetMetric) -> Int64 {
            guard metric.quantile != nil else { return 1 }
            switch self {
            case .automatic: return metric.automaticMinimumSamples
            case .atLeast(let count): return count
            }
        }
    }

    /// How a regression against a baseline is recognised: the change must exceed both floors.
    public struct RegressionPolicy: Sendable, Equatable {
        /// The statistic compared.
        public var stat: BudgetMetric
        /// The relative floor, a percentage (15 for `"15%"`).
        public var maxIncreasePercent: Double
        /// The absolute floor, in the stat's unit.
        public var minDelta: BudgetQuantity
        /// The level of a regression.
        public var level: Level
        /// Whether a check without `--baseline` is incomplete (exit 4).
        public var requireBaseline: Bool

        /// The defaults: p50, +15 % and +2 ms, level error, baseline optional.
        public init(
            stat: BudgetMetric = .p50, maxIncreasePercent: Double = 15,
            minDelta: BudgetQuantity = BudgetQuantity(2, .milliseconds), level: Level = .error,
            requireBaseline: Bool = false
        ) {
            self.stat = stat
            self.maxIncreasePercent = maxIncreasePercent
            self.minDelta = minDelta
            self.level = level
            self.requireBaseline = requireBaseline
        }
    }

    /// The `defaults` section.
    public struct Defaults: Sendable, Equatable {
        /// The level of limits that name none.
        public var level: Level = .error
        /// What a budgeted span absent from the report is: `error` makes it exit 4.
        public var onMissing: Level = .error
        /// What a statistic with too few samples is: `error` makes it exit 4.
        public var onInsufficient: Level = .warn
        /// The minimum samples of the percentile metrics (the others are facts, not estimates).
        public var minSamples: MinimumSamples = .automatic
        /// The regression policy.
        public var regression = RegressionPolicy()

        /// The defaults of the format.
        public init() {}
    }

    /// One entry of `spans`.
    public struct SpanRule: Sendable, Equatable {
        /// An exact span name or a glob (`*`, `?`).
        public var match: String
        /// Limits by metric.
        public var limits: [BudgetMetric: Limit]
        /// The rule's level for its limits that name none.
        public var level: Level?
        /// Overrides `defaults.onMissing` for the spans this rule names.
        public var onMissing: Level?
        /// Overrides `defaults.minSamples`.
        public var minSamples: MinimumSamples?
        /// Overrides parts of `defaults.regression` (already merged with the defaults).
        public var regression: RegressionPolicy?
        /// Shown on a breach of any of the rule's limits that has no message of its own.
        public var message: String?

        /// Creates a rule.
        public init(
            match: String, limits: [BudgetMetric: Limit] = [:], level: Level? = nil, onMissing: Level? = nil,
            minSamples: MinimumSamples? = nil, regression: RegressionPolicy? = nil, message: String? = nil
        ) {
            self.match = match
            self.limits = limits
            self.level = level
            self.onMissing = onMissing
            self.minSamples = minSamples
            self.regression = regression
            self.message = message
        }

        /// The rule as messages name it: `spans[1] ("api.*")`.
        func label(_ index: Int) -> String { "spans[\(index)] (\"\(match)\")" }
    }

    /// The hang metrics `hangs` can limit: counts and milliseconds from the report's `hangs`.
    public static let hangMetrics: [String: BudgetQuantity.Unit] = [
        "count": .count, "fatal": .count, "suppressed": .count, "maxMs": .milliseconds, "totalMs": .milliseconds,
    ]
    /// The ledger metrics `ledger` can limit: counts from the report's `ledger`.
    public static let ledgerMetrics: [String: BudgetQuantity.Unit] = [
        "events": .count, "malformedLines": .count, "unknownKinds": .count, "tornTail": .count,
    ]

    /// The file, for messages.
    public var path: String
    /// The `defaults` section.
    public var defaults: Defaults
    /// The `spans` rules, in order.
    public var spans: [SpanRule]
    /// Limits on the report's `hangs` (keys of ``hangMetrics``).
    public var hangs: [String: Limit]
    /// Limits on the report's `ledger` (keys of ``ledgerMetrics``).
    public var ledger: [String: Limit]

    /// Creates budgets in code.
    public init(
        path: String = "<budgets>", defaults: Defaults = Defaults(), spans: [SpanRule] = [],
        hangs: [String: Limit] = [:], ledger: [String: Limit] = [:]
    ) {
        self.path = path
        self.defaults = defaults
        self.spans = spans
        self.hangs = hangs
        self.ledger = ledger
    }
}
