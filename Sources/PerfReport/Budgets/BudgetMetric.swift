// The statistics a budget can limit, with their units and how many samples each needs before it
// means anything.
import Perf

/// A span statistic a budget can limit or a regression can compare.
public enum BudgetMetric: String, Sendable, CaseIterable, Comparable {
    /// Calls counted.
    case count
    /// Percentiles from the span's histogram, in milliseconds.
    case p50, p90, p95, p99
    /// The longest call, in milliseconds.
    case max
    /// All calls together, in milliseconds.
    case sum
    /// Calls over their call site's budget (ledger lines).
    case overBudget
    /// `overBudget` as a percentage of `count`.
    case overBudgetRate

    /// The unit its limits must be written in.
    public var unit: BudgetQuantity.Unit {
        switch self {
        case .count, .overBudget: return .count
        case .overBudgetRate: return .percent
        case .p50, .p90, .p95, .p99, .max, .sum: return .milliseconds
        }
    }

    /// The quantile, for the percentile metrics.
    public var quantile: Double? {
        switch self {
        case .p50: return 0.5
        case .p90: return 0.9
        case .p95: return 0.95
        case .p99: return 0.99
        default: return nil
        }
    }

    /// The samples `minSamples: "auto"` demands: about five observations beyond the quantile
    /// (p50 10, p90 50, p95 100, p99 500), so a percentile is never judged on a handful of
    /// calls; 1 for the others, which are facts rather than estimates.
    public var automaticMinimumSamples: Int64 {
        guard let quantile else { return 1 }
        return Int64((5 / (1 - quantile)).rounded())
    }

    /// Declaration order, the order checks are listed in.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
