// The per-name latency distribution: a fixed-size, mergeable, log-linear histogram value.

/// A latency distribution over nanoseconds with at most 1 % relative error on any quantile from
/// 1 µs to 1 hour, in fixed memory.
///
/// Values are counted in log-linear buckets (see the geometry on `HistogramLayout`: 64 linear
/// sub-buckets per power of two), so a quantile is reported as the midpoint of the bucket that
/// holds it, never more than 0.79 % away from the exact sample. `count`, `sumNanos`, `minNanos`
/// and `maxNanos` are exact: values below 512 ns or above 2^42 ns (≈ 73 min) are clamped into the
/// first or last bucket, but these statistics still see the true value.
///
/// It is a plain value: record into a local copy, ``merge(_:)`` copies from threads or sessions,
/// compare with `==`. Storage (2,112 counters, 16.5 KiB) is allocated on the first record, so an
/// empty histogram costs nothing. For concurrent recording use ``HistogramRegistry``.
///
/// ```swift
/// var histogram = LatencyHistogram()
/// histogram.record(nanos: 1_250_000)
/// histogram.record(nanos: 900_000, count: 3)
/// let p99 = histogram.quantile(0.99)   // nanoseconds
/// let json = histogram.jsonString      // {"buckets":[[…]],"count":4,…}
/// ```
public struct LatencyHistogram: Sendable, Equatable {
    /// One counter per bucket; empty until the first record so that empty histograms are free.
    @usableFromInline
    var bucketCounts: [UInt64]

    /// The number of recorded values.
    public private(set) var count: UInt64

    /// The sum of every recorded value in nanoseconds, saturating at `UInt64.max` (584 years).
    public private(set) var sumNanos: UInt64

    /// `UInt64.max` while empty, so that the first record always lowers it.
    @usableFromInline
    var storedMinNanos: UInt64

    /// The largest recorded value in nanoseconds, or 0 while empty.
    public private(set) var maxNanos: UInt64

    /// Creates an empty histogram.
    public init() {
        bucketCounts = []
        count = 0
        sumNanos = 0
        storedMinNanos = .max
        maxNanos = 0
    }

    /// Builds a histogram from raw bucket counters (the registry's snapshot and the JSON parser).
    ///
    /// The caller guarantees `bucketCounts.count == HistogramLayout.bucketCount`; `count` is
    /// derived from the buckets so the two can never disagree.
    init(bucketCounts: [UInt64], sumNanos: UInt64, minNanos: UInt64, maxNanos: UInt64) {
        self.init()
        let total = bucketCounts.reduce(0 as UInt64) { $0 &+ $1 }
        guard total > 0 else { return }
        self.bucketCounts = bucketCounts
        self.count = total
        self.sumNanos = sumNanos
        self.storedMinNanos = minNanos
        self.maxNanos = maxNanos
    }

    /// The smallest recorded value in nanoseconds, or 0 while empty.
    public var minNanos: UInt64 { count == 0 ? 0 : storedMinNanos }

    /// Whether nothing has been recorded.
    public var isEmpty: Bool { count == 0 }

    /// The mean in nanoseconds, or 0 while empty.
    public var meanNanos: Double { count == 0 ? 0 : Double(sumNanos) / Double(count) }

    /// Records one value.
    ///
    /// - Parameter nanos: A duration in nanoseconds.
    @inlinable
    public mutating func record(nanos: UInt64) {
        record(nanos: nanos, count: 1)
    }

    /// Records the same value `count` times, as if ``record(nanos:)`` were called `count` times.
    ///
    /// A `count` of 0 changes nothing.
    ///
    /// - Parameters:
    ///   - nanos: A duration in nanoseconds.
    ///   - count: How many times it was observed.
    public mutating func record(nanos: UInt64, count occurrences: UInt64) {
        guard occurrences > 0 else { return }
        if bucketCounts.isEmpty {
            bucketCounts = Array(repeating: 0, count: HistogramLayout.bucketCount)
        }
        bucketCounts[HistogramLayout.index(ofNanos: nanos)] &+= occurrences
        count &+= occurrences
        let (product, overflow) = nanos.multipliedReportingOverflow(by: occurrences)
        sumNanos = overflow ? .max : Self.saturatingAdd(sumNanos, product)
        storedMinNanos = min(storedMinNanos, nanos)
        maxNanos = max(maxNanos, nanos)
    }

    /// Adds every value of `other` to this histogram.
    ///
    /// The result equals the histogram of the union of both sets of values (`==` holds), whatever
    /// the order of merges.
    ///
    /// - Parameter other: Another histogram, for instance from another thread or session.
    public mutating func merge(_ other: LatencyHistogram) {
        guard !other.isEmpty else { return }
        guard !isEmpty else {
            self = other
            return
        }
        for index in bucketCounts.indices where other.bucketCounts[index] != 0 {
            bucketCounts[index] &+= other.bucketCounts[index]
        }
        count &+= other.count
        sumNanos = Self.saturatingAdd(sumNanos, other.sumNanos)
        storedMinNanos = min(storedMinNanos, other.storedMinNanos)
        maxNanos = max(maxNanos, other.maxNanos)
    }

    /// The value below which a fraction `q` of the recorded values fall, in nanoseconds.
    ///
    /// Uses the nearest-rank definition: the smallest recorded value such that at least
    /// `q × count` values are less than or equal to it, reported as the midpoint of its bucket and
    /// clamped to `minNanos...maxNanos`. From 1 µs to 1 hour the answer is within 0.79 % of the
    /// exact quantile. `quantile(0)` is `minNanos` and `quantile(1)` is `maxNanos`, exactly.
    ///
    /// - Parameter q: The fraction, from 0 to 1 (0.99 for p99). Values outside are clamped; NaN
    ///   reads as 0.
    /// - Returns: Nanoseconds, or 0 for an empty histogram.
    public func quantile(_ q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let fraction = q.isNaN ? 0 : min(max(q, 0), 1)
        if fraction == 0 { return storedMinNanos }
        if fraction == 1 { return maxNanos }
        let wanted = min(count, max(1, UInt64((fraction * Double(count)).rounded(.up))))
        var seen: UInt64 = 0
        for index in bucketCounts.indices where bucketCounts[index] != 0 {
            seen &+= bucketCounts[index]
            if seen >= wanted {
                return min(max(HistogramLayout.representative(ofIndex: index), storedMinNanos), maxNanos)
            }
        }
        return maxNanos
    }

    /// How many recorded values are at or below `nanos`: the cumulative count behind a
    /// Prometheus `le` bucket.
    ///
    /// Exact below ``minNanos`` and from ``maxNanos`` up; in between, the bucket that holds
    /// `nanos` is counted when its midpoint is at or below `nanos`, so the bound is off by at most
    /// half a bucket (0.79 %).
    ///
    /// - Parameter nanos: The upper bound, inclusive.
    /// - Returns: A count from 0 to ``count``.
    public func count(atOrBelowNanos nanos: UInt64) -> UInt64 {
        guard count > 0, nanos >= storedMinNanos else { return 0 }
        if nanos >= maxNanos { return count }
        let boundary = HistogramLayout.index(ofNanos: nanos)
        var total: UInt64 = 0
        for index in 0..<boundary { total &+= bucketCounts[index] }
        if HistogramLayout.representative(ofIndex: boundary) <= nanos { total &+= bucketCounts[boundary] }
        return total
    }

    static func saturatingAdd(_ lhs: UInt64, _ rhs: UInt64) -> UInt64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? .max : sum
    }
}
