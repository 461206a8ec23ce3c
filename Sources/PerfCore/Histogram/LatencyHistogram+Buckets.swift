// Bucket listing for exporters: Prometheus `le` buckets, HTML bars, JSON.

extension LatencyHistogram {
    /// One non-empty bucket: the range of values it holds and how many were recorded there.
    public struct Bucket: Sendable, Equatable {
        /// The bucket's position in the fixed layout (0 ..< 2112), as written to JSON.
        public let index: Int
        /// The smallest value the bucket can hold, in nanoseconds. For the first bucket this is
        /// lowered to `minNanos` when smaller values were clamped into it.
        public let lowerNanos: UInt64
        /// The largest value the bucket can hold, inclusive, in nanoseconds: a Prometheus `le`
        /// bound. For the last bucket this is raised to `maxNanos` when larger values were clamped
        /// into it.
        public let upperNanos: UInt64
        /// How many recorded values fall into the bucket.
        public let count: UInt64
    }

    /// The buckets holding at least one value, in increasing order of value.
    ///
    /// Cumulating their counts gives Prometheus `le` buckets; the last cumulative count equals
    /// ``count``. Bounds always contain every value counted in the bucket, including clamped ones.
    public var nonEmptyBuckets: [Bucket] {
        var buckets: [Bucket] = []
        for index in bucketCounts.indices where bucketCounts[index] != 0 {
            var lower = HistogramLayout.lowerBound(ofIndex: index)
            var upper = HistogramLayout.upperBound(ofIndex: index)
            if index == 0 { lower = min(lower, storedMinNanos) }
            if index == HistogramLayout.bucketCount - 1 { upper = max(upper, maxNanos) }
            buckets.append(Bucket(index: index, lowerNanos: lower, upperNanos: upper, count: bucketCounts[index]))
        }
        return buckets
    }
}
