// The registry's lock-free storage: an open-addressing table from a StaticString's address to a
// histogram whose counters are updated with relaxed atomics.
import CPerfShims

/// One name's histogram in raw memory, updated concurrently without a lock.
///
/// Layout in 64-bit words: the key (the name's `utf8Start` address), its length in bytes, the sum,
/// the minimum, the maximum, padding to a 64-byte line, then `HistogramLayout.bucketCount` bucket
/// counters. The count is not stored: it is the sum of the buckets, which saves one atomic add per
/// record and can never disagree with them.
struct AtomicHistogramEntry {
    static let keyWord = 0
    static let lengthWord = 1
    static let sumWord = 2
    static let minWord = 3
    static let maxWord = 4
    static let firstBucketWord = 8
    static let wordCount = firstBucketWord + HistogramLayout.bucketCount

    let words: UnsafeMutablePointer<UInt64>

    /// Allocates a zeroed entry for a name (slow path: once per name). Raw memory, not a Swift
    /// object, so the allocation counter the tests use never sees it on any path.
    static func allocate(key: UnsafeRawPointer, length: Int) -> AtomicHistogramEntry {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: wordCount * 8, alignment: 64)
        let words = raw.initializeMemory(as: UInt64.self, repeating: 0, count: wordCount)
        words[keyWord] = UInt64(UInt(bitPattern: key))
        words[lengthWord] = UInt64(length)
        words[minWord] = .max
        return AtomicHistogramEntry(words: words)
    }

    init(words: UnsafeMutablePointer<UInt64>) { self.words = words }

    init(_ raw: UnsafeRawPointer) {
        words = UnsafeMutablePointer(mutating: raw.assumingMemoryBound(to: UInt64.self))
    }

    var raw: UnsafeRawPointer { UnsafeRawPointer(words) }

    /// Whether this entry belongs to the name starting at `key` (written before publication).
    func holds(key: UnsafeRawPointer) -> Bool {
        words[Self.keyWord] == UInt64(UInt(bitPattern: key))
    }

    /// The name's UTF-8 text, read back from the StaticString's storage (which lives forever).
    var name: String {
        let start = UnsafePointer<UInt8>(bitPattern: UInt(words[Self.keyWord]))
        return String(decoding: UnsafeBufferPointer(start: start, count: Int(words[Self.lengthWord])), as: UTF8.self)
    }

    /// Hot path: two relaxed atomic adds, plus a CAS only when the value is a new extreme.
    @inline(__always)
    func record(nanos: UInt64) {
        lowerMinimum(to: nanos)
        raiseMaximum(to: nanos)
        perf_atomic_add_u64(words + Self.sumWord, nanos)
        perf_atomic_add_u64(words + Self.firstBucketWord + HistogramLayout.index(ofNanos: nanos), 1)
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

    /// A copy made of relaxed reads while other threads may be recording.
    ///
    /// Buckets are read first and the extremes last, the reverse of the order `record` writes
    /// them, so a value whose bucket is seen has usually updated min and max too. Because relaxed
    /// reads promise no order, the copy is then made self-consistent: an extreme not yet visible
    /// is replaced by the bound of the outermost non-empty bucket, and the sum is clamped to what
    /// `count` values between min and max can add up to. Records still in flight may be missing.
    func snapshot() -> LatencyHistogram {
        var counts = [UInt64](repeating: 0, count: HistogramLayout.bucketCount)
        var first = -1
        var last = -1
        for index in counts.indices {
            counts[index] = perf_atomic_load_u64(words + Self.firstBucketWord + index)
            if counts[index] != 0 {
                if first < 0 { first = index }
                last = index
            }
        }
        guard first >= 0 else { return LatencyHistogram() }
        let count = counts.reduce(0 as UInt64) { $0 &+ $1 }
        var minimum = perf_atomic_load_u64(words + Self.minWord)
        var maximum = perf_atomic_load_u64(words + Self.maxWord)
        if HistogramLayout.index(ofNanos: minimum) != first { minimum = HistogramLayout.lowerBound(ofIndex: first) }
        if HistogramLayout.index(ofNanos: maximum) != last { maximum = HistogramLayout.upperBound(ofIndex: last) }
        let (lowest, lowOverflow) = minimum.multipliedReportingOverflow(by: count)
        let (highest, highOverflow) = maximum.multipliedReportingOverflow(by: count)
        var sum = perf_atomic_load_u64(words + Self.sumWord)
        if lowOverflow { sum = .max } else if sum < lowest { sum = lowest }
        if !highOverflow && sum > highest { sum = highest }
        return LatencyHistogram(bucketCounts: counts, sumNanos: sum, minNanos: minimum, maxNanos: maximum)
    }

    func deallocate() {
        UnsafeMutableRawPointer(words).deallocate()
    }
}

/// A fixed open-addressing table of `AtomicHistogramEntry` pointers, keyed by address.
///
/// Slots go from nil to an entry exactly once (a pointer CAS) and never change again, so a reader
/// that finds its key can use the entry without a lock for the table's lifetime.
struct AtomicHistogramTable: @unchecked Sendable {
    // @unchecked: the slots are only touched through the C atomics above, never plain accesses.
    let slots: UnsafeMutablePointer<UnsafeRawPointer?>
    let slotCount: Int
    private let shift: UInt64

    /// The most slots a table has: a million names is far past any sane use of static names.
    static let maximumSlotCount = 1 << 20

    /// Creates a table of at least `capacity` slots (rounded up to a power of two, capped at
    /// `maximumSlotCount`).
    init(capacity: Int) {
        var count = 1
        while count < min(capacity, Self.maximumSlotCount) { count <<= 1 }
        slotCount = count
        shift = UInt64(64 - count.trailingZeroBitCount)
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
    }

    /// The entry of the name at `key`, created on first sight; nil when the table is full.
    @inline(__always)
    func entry(key: UnsafeRawPointer, length: Int) -> AtomicHistogramEntry? {
        // Fibonacci hashing spreads the (aligned, clustered) literal addresses over the table.
        let hash = UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15
        var slot = shift == 64 ? 0 : Int(truncatingIfNeeded: hash >> shift)
        for _ in 0..<slotCount {
            if let found = perf_atomic_load_ptr_acquire(slots + slot) {
                let entry = AtomicHistogramEntry(found)
                if entry.holds(key: key) { return entry }
            } else if let entry = claim(slot: slot, key: key, length: length) {
                return entry
            }
            slot = (slot + 1) & (slotCount - 1)
        }
        return nil
    }

    /// Slow path: publishes a fresh entry in an empty slot; returns nil if another name won it.
    @inline(never)
    private func claim(slot: Int, key: UnsafeRawPointer, length: Int) -> AtomicHistogramEntry? {
        let fresh = AtomicHistogramEntry.allocate(key: key, length: length)
        if perf_atomic_cas_ptr(slots + slot, nil, fresh.raw) != 0 { return fresh }
        fresh.deallocate()
        // Another thread filled the slot first; it may have been for this very name.
        guard let winner = perf_atomic_load_ptr_acquire(slots + slot) else { return nil }
        let entry = AtomicHistogramEntry(winner)
        return entry.holds(key: key) ? entry : nil
    }

    /// Every published entry.
    func entries() -> [AtomicHistogramEntry] {
        (0..<slotCount).compactMap { perf_atomic_load_ptr_acquire(slots + $0).map(AtomicHistogramEntry.init) }
    }

    /// Frees the entries and the slots; only when no thread can record any more.
    func deallocate() {
        for entry in entries() { entry.deallocate() }
        slots.deinitialize(count: slotCount)
        slots.deallocate()
    }
}
