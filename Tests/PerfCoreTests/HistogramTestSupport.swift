// Seeded randomness and exact reference quantiles for the histogram tests.
import Foundation

/// SplitMix64: tiny, fast and repeatable, so a failing seed reproduces the failure exactly.
struct SeededRandom: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in (0, 1], never 0 so that `log` is finite.
    mutating func unitInterval() -> Double {
        Double((next() >> 11) + 1) / Double(1 << 53)
    }

    /// A standard normal sample (Box–Muller).
    mutating func normal() -> Double {
        let u1 = unitInterval()
        let u2 = unitInterval()
        return (-2 * Foundation.log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

/// The seed for a randomised test: `PERF_TEST_SEED` when set (to replay a failure), else fresh.
func histogramTestSeed() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["PERF_TEST_SEED"], let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0...UInt64.max)
}

/// The nearest-rank quantile of sorted samples: the smallest value with at least `q × n` values at
/// or below it. This is the definition `LatencyHistogram.quantile` approximates.
func exactQuantile(_ sorted: [UInt64], _ q: Double) -> UInt64 {
    let rank = min(sorted.count, max(1, Int((q * Double(sorted.count)).rounded(.up))))
    return sorted[rank - 1]
}

/// The quantiles every accuracy test checks: p1 … p99, then p99.9.
let checkedQuantiles: [Double] = (1...99).map { Double($0) / 100 } + [0.999]
