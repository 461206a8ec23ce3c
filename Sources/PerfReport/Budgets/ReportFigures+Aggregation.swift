// Several runs of the same head combined into one set of figures, so one noisy run does not
// decide a verdict.
import Perf

extension ReportFigures {
    /// How the runs of `--current` are combined, metric by metric.
    public enum Aggregation: String, Sendable, CaseIterable {
        /// The median run (the mean of the middle two for an even number).
        case median
        /// The best run: the lowest value (every metric is better lower).
        case optimistic
        /// The worst run: the highest value.
        case pessimistic

        func combine(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            switch self {
            case .optimistic: return sorted.first ?? 0
            case .pessimistic: return sorted.last ?? 0
            case .median:
                guard !sorted.isEmpty else { return 0 }
                let middle = sorted.count / 2
                return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            }
        }
    }

    /// Combines the figures of several runs; a span counts in the runs that have it. The
    /// environment is the first run's.
    public static func aggregate(_ runs: [Self], by aggregation: Aggregation) -> Self {
        guard let first = runs.first else { return Self(path: "", spans: [:]) }
        guard runs.count > 1 else { return first }
        var spans: [String: Span] = [:]
        for name in Set(runs.flatMap(\.spans.keys)) {
            let present = runs.compactMap { $0.spans[name] }
            var values: [BudgetMetric: Double] = [:]
            for metric in BudgetMetric.allCases {
                values[metric] = aggregation.combine(present.map { $0.values[metric] ?? 0 })
            }
            spans[name] = Span(values: values, site: present.lazy.compactMap(\.site).first)
        }
        func combine(_ tables: [[String: Double]]) -> [String: Double] {
            Set(tables.flatMap(\.keys)).reduce(into: [:]) { result, key in
                result[key] = aggregation.combine(tables.map { $0[key] ?? 0 })
            }
        }
        return Self(
            path: runs.map(\.path).joined(separator: "+"), spans: spans, hangs: combine(runs.map(\.hangs)),
            ledger: combine(runs.map(\.ledger)), environment: first.environment)
    }
}
