// Bucket geometry shared by `LatencyHistogram` and the registry's atomic tables.

/// Log-linear (HDR style) bucket geometry over nanoseconds.
///
/// Every power-of-two range ("octave") `[2^e, 2^(e+1))` from `2^9` ns (512 ns) to `2^42` ns (about
/// 73 minutes) is split into 64 equal sub-buckets. A bucket is therefore at most 1/64 of its lower
/// bound wide, and reporting its midpoint is off by at most 1/128 ≈ 0.78 % for any value inside it:
/// comfortably under the 1 % promised from 1 µs to 1 hour. Values below 512 ns land in the first
/// bucket and values past the last octave in the last one, so memory stays fixed at
/// ``bucketCount`` counters whatever is recorded.
///
/// The geometry is part of the JSON format (`"sub":64,"lo":9`): changing it needs a new major
/// version of that format.
@usableFromInline
enum HistogramLayout {
    /// log2 of the number of sub-buckets per octave.
    static let subBucketBits = 6
    /// Linear sub-buckets per octave.
    static let subBucketCount = 1 << subBucketBits
    /// The exponent of the first octave: 2^9 ns = 512 ns, just under 1 µs.
    static let lowestExponent = 9
    /// One past the exponent of the last octave: 2^42 ns ≈ 73 minutes, just over 1 hour.
    static let endExponent = 42
    /// Counters per histogram.
    static let bucketCount = (endExponent - lowestExponent) << subBucketBits
    /// Smallest value that gets a bucket of its own; anything smaller shares the first bucket.
    static let lowestDistinctNanos: UInt64 = 1 << UInt64(lowestExponent)
    /// Largest value that gets a bucket of its own; anything larger shares the last bucket.
    static let highestDistinctNanos: UInt64 = (1 << UInt64(endExponent)) - 1

    /// The bucket a value falls into: a clamp, a leading-zero count and two shifts.
    @inline(__always)
    @usableFromInline
    static func index(ofNanos nanos: UInt64) -> Int {
        let clamped = min(max(nanos, lowestDistinctNanos), highestDistinctNanos)
        let exponent = 63 - clamped.leadingZeroBitCount
        let subBucket = Int(truncatingIfNeeded: clamped >> UInt64(exponent - subBucketBits)) & (subBucketCount - 1)
        return (exponent - lowestExponent) << subBucketBits | subBucket
    }

    /// The smallest value of bucket `index` (ignoring the clamp of the first bucket).
    static func lowerBound(ofIndex index: Int) -> UInt64 {
        let exponent = (index >> subBucketBits) + lowestExponent
        let subBucket = UInt64(index & (subBucketCount - 1))
        return (UInt64(subBucketCount) + subBucket) << UInt64(exponent - subBucketBits)
    }

    /// The width of bucket `index` in nanoseconds.
    static func width(ofIndex index: Int) -> UInt64 {
        1 << UInt64((index >> subBucketBits) + lowestExponent - subBucketBits)
    }

    /// The largest value of bucket `index`, inclusive (ignoring the clamp of the last bucket).
    static func upperBound(ofIndex index: Int) -> UInt64 {
        lowerBound(ofIndex: index) + width(ofIndex: index) - 1
    }

    /// The value reported for a quantile that falls into bucket `index`: its midpoint, which halves
    /// the worst-case error compared with either bound.
    static func representative(ofIndex index: Int) -> UInt64 {
        lowerBound(ofIndex: index) + width(ofIndex: index) / 2
    }
}
