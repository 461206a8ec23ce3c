// One thread stripe of a name's histogram: a block of counters in raw memory, updated either by
// its single owning thread with plain stores or by several threads with relaxed atomic adds.
import CPerfShims

/// A full set of histogram counters that one or a few threads update.
///
/// Layout in 64-bit words: the sum, the minimum, the maximum, padding to a 64-byte line, then
/// `HistogramLayout.bucketCount` bucket counters. The count is not stored: it is the sum of the
/// buckets, which saves one update per record and can never disagree with them.
///
/// Every access goes through the C relaxed atomics, so a snapshot reading while the owner writes is
/// not a data race; on x86-64 and arm64 a relaxed load or store is a plain `mov`/`ldr`/`str`.
struct AtomicHistogramStripe {
    static let sumWord = 0
    static let minWord = 1
    static let maxWord = 2
    static let firstBucketWord = 8
    static let wordCount = firstBucketWord + HistogramLayout.bucketCount
    /// Bytes one stripe occupies (16.9 KiB).
    static let byteCount = wordCount * 8

    let words: UnsafeMutablePointer<UInt64>

    /// Allocates a zeroed stripe (slow path: once per name and stripe). Raw memory, not a Swift
    /// object, so the allocation counter the tests use never sees it on any path.
    static func allocate() -> AtomicHistogramStripe {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        let words = raw.initializeMemory(as: UInt64.self, repeating: 0, count: wordCount)
        words[minWord] = .max
        return AtomicHistogramStripe(words: words)
    }

    init(words: UnsafeMutablePointer<UInt64>) { self.words = words }

    init(_ raw: UnsafeRawPointer) {
        words = UnsafeMutablePointer(mutating: raw.assumingMemoryBound(to: UInt64.self))
    }

    var raw: UnsafeRawPointer { UnsafeRawPointer(words) }

    /// Hot path for the stripe's only writer: loads and stores, no `lock` prefix.
    ///
    /// Correct only while the calling thread owns the stripe exclusively (see
    /// `perf_thread_stripe`): a concurrent writer's increment could otherwise be lost.
    @inline(__always)
    func recordExclusively(nanos: UInt64) {
        if nanos < perf_atomic_load_u64(words + Self.minWord) { perf_atomic_store_u64(words + Self.minWord, nanos) }
        if nanos > perf_atomic_load_u64(words + Self.maxWord) { perf_atomic_store_u64(words + Self.maxWord, nanos) }
        let bucket = words + Self.firstBucketWord + HistogramLayout.index(ofNanos: nanos)
        perf_atomic_store_u64(bucket, perf_atomic_load_u64(bucket) &+ 1)
        let sum = words + Self.sumWord
        perf_atomic_store_u64(sum, perf_atomic_load_u64(sum) &+ nanos)
    }

    /// Hot path for a stripe several threads share: two relaxed atomic adds, plus a CAS only when
    /// the value is a new extreme.
    @inline(__always)
    func recordShared(nanos: UInt64) {
        lowerMinimum(to: nanos)
        raiseMaximum(to: nanos)
        perf_atomic_add_u64(words + Self.firstBucketWord + HistogramLayout.index(ofNanos: nanos), 1)
        perf_atomic_add_u64(words + Self.sumWord, nanos)
    }

    @inline(__always)
    private func lowerMinimum(to nanos: UInt64) {
        var current = perf_atomic_load_u64(words + Self.minWord)
        while nanos < current {
            if perf_atomic_cas_u64(words + Self.minWord, current, nanos) != 0 { return }
            current = perf_atomic_load_u64(words + Self.minWord)
        }
    }

    @inline(__always)
    private func raiseMaximum(to nanos: UInt64) {
        var current = perf_atomic_load_u64(words + Self.maxWord)
        while nanos > current {
            if perf_atomic_cas_u64(words + Self.maxWord, current, nanos) != 0 { return }
            current = perf_atomic_load_u64(words + Self.maxWord)
        }
    }

    /// What one stripe adds to a snapshot, besides its bucket counts.
    struct Totals {
        var sumNanos: UInt64
        var minNanos: UInt64
        var maxNanos: UInt64

        /// The totals of both stripes together.
        func combined(with other: Totals) -> Totals {
            Totals(
                sumNanos: LatencyHistogram.saturatingAdd(sumNanos, other.sumNanos),
                minNanos: min(minNanos, other.minNanos), maxNanos: max(maxNanos, other.maxNanos))
        }
    }

    /// Adds the stripe's buckets to `counts` with relaxed reads while its writers may be recording,
    /// and returns its totals; nil when the stripe is empty.
    ///
    /// Buckets are read first and the extremes last, the reverse of the order the record methods
    /// write them, so a value whose bucket is seen has usually updated min and max too. Because
    /// relaxed reads promise no order, the totals are then made consistent with the buckets read:
    /// an extreme not yet visible is replaced by the bound of the outermost non-empty bucket, and
    /// the sum is clamped to what `count` values between min and max can add up to. Records still
    /// in flight may be missing. Adding into one array, rather than copying each stripe, keeps a
    /// snapshot of many stripes to one allocation.
    func accumulate(into counts: inout [UInt64]) -> Totals? {
        var count: UInt64 = 0
        var first = -1
        var last = -1
        for index in counts.indices {
            let bucket = perf_atomic_load_u64(words + Self.firstBucketWord + index)
            guard bucket != 0 else { continue }
            counts[index] &+= bucket
            count &+= bucket
            if first < 0 { first = index }
            last = index
        }
        guard first >= 0 else { return nil }
        var minimum = perf_atomic_load_u64(words + Self.minWord)
        var maximum = perf_atomic_load_u64(words + Self.maxWord)
        if HistogramLayout.index(ofNanos: minimum) != first { minimum = HistogramLayout.lowerBound(ofIndex: first) }
        if HistogramLayout.index(ofNanos: maximum) != last { maximum = HistogramLayout.upperBound(ofIndex: last) }
        let (lowest, lowOverflow) = minimum.multipliedReportingOverflow(by: count)
        let (highest, highOverflow) = maximum.multipliedReportingOverflow(by: count)
        var sum = perf_atomic_load_u64(words + Self.sumWord)
        if lowOverflow { sum = .max } else if sum < lowest { sum = lowest }
        if !highOverflow && sum > highest { sum = highest }
        return Totals(sumNanos: sum, minNanos: minimum, maxNanos: maximum)
    }

    func deallocate() {
        UnsafeMutableRawPointer(words).deallocate()
    }
}
