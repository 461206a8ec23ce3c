// Exact reference quantiles for the histogram tests (their seeded generator is PerfTestSupport's).
import Foundation

/// The nearest-rank quantile of sorted samples: the smallest value with at least `q × n` values at
/// or below it. This is the definition `LatencyHistogram.quantile` approximates.
func exactQuantile(_ sorted: [UInt64], _ q: Double) -> UInt64 {
    let rank = min(sorted.count, max(1, Int((q * Double(sorted.count)).rounded(.up))))
    return sorted[rank - 1]
}

/// The quantiles every accuracy test checks: p1 … p99, then p99.9.
let checkedQuantiles: [Double] = (1...99).map { Double($0) / 100 } + [0.999]
