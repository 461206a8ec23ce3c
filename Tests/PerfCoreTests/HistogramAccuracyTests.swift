// LatencyHistogram against exact quantiles, merges against unions, and the exact statistics.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct HistogramAccuracyTests {
    /// Distributions over the promised range (1 µs … 1 h); samples outside it are drawn again.
    enum Distribution: String, CaseIterable, Sendable {
        case uniform, logNormal, bimodal

        func sample(_ random: inout SeededRandom) -> UInt64 {
            while true {
                let value: Double
                switch self {
                case .uniform:
                    value = 1_000 + random.unitInterval() * 3_600_000_000_000
                case .logNormal:
                    // Median 2 ms, σ = 2: spans five orders of magnitude.
                    value = 2_000_000 * Foundation.exp(2 * random.normal())
                case .bimodal:
                    // A fast cache-hit mode and a slow cache-miss mode 200× away.
                    value =
                        random.unitInterval() < 0.7
                        ? 250_000 + 30_000 * random.normal() : 50_000_000 + 8_000_000 * random.normal()
                }
                if value >= 1_000 && value <= 3_600_000_000_000 { return UInt64(value) }
            }
        }
    }

    static let sampleCount = 1_000_000

    @Test(arguments: Distribution.allCases)
    func everyQuantileWithinOnePercent(of distribution: Distribution) {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var samples = [UInt64](repeating: 0, count: Self.sampleCount)
        var histogram = LatencyHistogram()
        for index in samples.indices {
            samples[index] = distribution.sample(&random)
            histogram.record(nanos: samples[index])
        }
        samples.sort()
        for q in checkedQuantiles {
            let exact = Double(exactQuantile(samples, q))
            let estimate = Double(histogram.quantile(q))
            let error = abs(estimate - exact) / exact
            #expect(error <= 0.01, "\(distribution) p\(q * 100): \(estimate) vs exact \(exact), seed \(seed)")
        }
        #expect(histogram.count == UInt64(Self.sampleCount))
        #expect(histogram.minNanos == samples.first, "seed \(seed)")
        #expect(histogram.maxNanos == samples.last, "seed \(seed)")
        #expect(histogram.sumNanos == samples.reduce(0, +), "seed \(seed)")
        #expect(histogram.quantile(0) == samples.first)
        #expect(histogram.quantile(1) == samples.last)
    }

    @Test func bucketMidpointsStayWithinOnePercentAcrossTheWholeRange() {
        // Two values per bucket (its bounds) bracket every value the bucket can hold.
        for index in 0..<HistogramLayout.bucketCount {
            let lower = HistogramLayout.lowerBound(ofIndex: index)
            let upper = HistogramLayout.upperBound(ofIndex: index)
            #expect(HistogramLayout.index(ofNanos: lower) == index)
            #expect(HistogramLayout.index(ofNanos: upper) == index)
            let middle = Double(HistogramLayout.representative(ofIndex: index))
            #expect(abs(middle - Double(lower)) / Double(lower) < 0.008)
            #expect(abs(middle - Double(upper)) / Double(upper) < 0.008)
            if index > 0 { #expect(HistogramLayout.upperBound(ofIndex: index - 1) + 1 == lower) }
        }
        #expect(HistogramLayout.lowerBound(ofIndex: 0) <= 1_000)
        #expect(HistogramLayout.upperBound(ofIndex: HistogramLayout.bucketCount - 1) >= 3_600_000_000_000)
    }

    @Test func clampedValuesKeepExactStatistics() {
        var histogram = LatencyHistogram()
        histogram.record(nanos: 3)
        histogram.record(nanos: 10_000_000_000_000, count: 2)  // 2.8 hours, past the last octave
        #expect(histogram.count == 3)
        #expect(histogram.minNanos == 3)
        #expect(histogram.maxNanos == 10_000_000_000_000)
        #expect(histogram.sumNanos == 20_000_000_000_003)
        // Past the last octave a quantile is only known to lie in the last bucket: its midpoint.
        #expect(histogram.quantile(0.5) == HistogramLayout.representative(ofIndex: HistogramLayout.bucketCount - 1))
        let buckets = histogram.nonEmptyBuckets
        #expect(buckets.map(\.index) == [0, HistogramLayout.bucketCount - 1])
        #expect(buckets.first?.lowerNanos == 3)
        #expect(buckets.last?.upperNanos == 10_000_000_000_000)
        #expect(buckets.map(\.count) == [1, 2])
    }

    @Test func emptyAndZeroCountRecordsChangeNothing() {
        var histogram = LatencyHistogram()
        #expect(histogram.quantile(0.5) == 0 && histogram.minNanos == 0 && histogram.maxNanos == 0)
        histogram.record(nanos: 5_000, count: 0)
        #expect(histogram == LatencyHistogram())
        #expect(histogram.nonEmptyBuckets.isEmpty)
        histogram.record(nanos: 5_000)
        #expect(histogram.quantile(.nan) == 5_000 && histogram.quantile(-1) == 5_000 && histogram.quantile(7) == 5_000)
    }

    @Test func sumSaturatesInsteadOfWrapping() {
        var histogram = LatencyHistogram()
        histogram.record(nanos: UInt64.max / 2, count: 3)
        #expect(histogram.sumNanos == .max)
        #expect(histogram.count == 3)
    }

    @Test func mergeEqualsTheHistogramOfTheUnion() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var union = LatencyHistogram()
        var parts = [LatencyHistogram](repeating: LatencyHistogram(), count: 3)
        for _ in 0..<50_000 {
            let distribution = Distribution.allCases[Int(random.next() % 3)]
            let value = random.next() % 50 == 0 ? random.next() % 600 : distribution.sample(&random)
            union.record(nanos: value)
            parts[Int(random.next() % 3)].record(nanos: value)
        }
        var forward = LatencyHistogram()
        for part in parts { forward.merge(part) }
        var backward = parts[2]
        backward.merge(parts[1])
        backward.merge(parts[0])
        backward.merge(LatencyHistogram())
        #expect(forward == union, "seed \(seed)")
        #expect(backward == union, "seed \(seed)")
        #expect(forward.quantile(0.99) == union.quantile(0.99))
    }
}
