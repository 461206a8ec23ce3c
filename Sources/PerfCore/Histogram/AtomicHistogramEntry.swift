// One name's histogram in the registry's table: the name and up to one counter stripe per
// recording thread, so concurrent threads tick separate cache lines.
import CPerfShims

/// One name's histogram in raw memory, recorded into concurrently without a lock.
///
/// Layout in 64-bit words: the key (the name's `utf8Start` address), its length in bytes, padding to
/// a 64-byte line, then `stripeCount` stripe pointers, nil until a thread mapped to that stripe
/// first records the name. Stripes below `PERF_EXCLUSIVE_STRIPES` have one writer at a time and are
/// updated with plain stores; the shared ones above use atomic adds.
///
/// Memory per name: 320 bytes, plus 16.9 KiB for each stripe some thread actually recorded into
/// (so one recording thread costs one stripe, and the worst case is `stripeCount` stripes, 541 KiB).
struct AtomicHistogramEntry {
    static let keyWord = 0
    static let lengthWord = 1
    static let firstStripeWord = 8
    static let exclusiveStripeCount = Int(PERF_EXCLUSIVE_STRIPES)
    static let stripeCount = Int(PERF_EXCLUSIVE_STRIPES + PERF_SHARED_STRIPES)
    static let wordCount = firstStripeWord + stripeCount

    let words: UnsafeMutablePointer<UInt64>

    /// Allocates an entry without stripes for a name (slow path: once per name).
    static func allocate(key: UnsafeRawPointer, length: Int) -> AtomicHistogramEntry {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: wordCount * 8, alignment: 64)
        let words = raw.initializeMemory(as: UInt64.self, repeating: 0, count: wordCount)
        words[keyWord] = UInt64(UInt(bitPattern: key))
        words[lengthWord] = UInt64(length)
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

    private var stripeSlots: UnsafeMutablePointer<UnsafeRawPointer?> {
        UnsafeMutableRawPointer(words + Self.firstStripeWord).assumingMemoryBound(to: UnsafeRawPointer?.self)
    }

    /// Hot path: finds the calling thread's stripe and ticks it, with plain stores when the thread
    /// owns the stripe and atomic adds when it shares it.
    @inline(__always)
    func record(nanos: UInt64) {
        let index = Int(perf_thread_stripe())
        let stripe: AtomicHistogramStripe
        if let found = perf_atomic_load_ptr_acquire(stripeSlots + index) {
            stripe = AtomicHistogramStripe(found)
        } else {
            stripe = claimStripe(index)
        }
        if index < Self.exclusiveStripeCount {
            stripe.recordExclusively(nanos: nanos)
        } else {
            stripe.recordShared(nanos: nanos)
        }
    }

    /// Slow path: publishes a fresh stripe, or adopts the one another thread sharing the index
    /// published first.
    @inline(never)
    private func claimStripe(_ index: Int) -> AtomicHistogramStripe {
        let fresh = AtomicHistogramStripe.allocate()
        if perf_atomic_cas_ptr(stripeSlots + index, nil, fresh.raw) != 0 { return fresh }
        fresh.deallocate()
        // A slot never returns to nil once set, so the failed CAS guarantees a winner to load.
        return AtomicHistogramStripe(perf_atomic_load_ptr_acquire(stripeSlots + index)!)
    }

    /// Every published stripe.
    private func stripes() -> [AtomicHistogramStripe] {
        (0..<Self.stripeCount).compactMap {
            perf_atomic_load_ptr_acquire(stripeSlots + $0).map(AtomicHistogramStripe.init)
        }
    }

    /// The sum of every stripe; see `AtomicHistogramStripe.accumulate(into:)` for what a snapshot
    /// taken while threads record promises. Exact once every recording has returned.
    ///
    /// Each stripe's totals are consistent with its buckets, so their combination is consistent
    /// with the summed buckets: min and max lie in the outermost non-empty buckets and the sum stays
    /// between count × min and count × max.
    func snapshot() -> LatencyHistogram {
        var counts = [UInt64](repeating: 0, count: HistogramLayout.bucketCount)
        var merged: AtomicHistogramStripe.Totals?
        for stripe in stripes() {
            guard let totals = stripe.accumulate(into: &counts) else { continue }
            merged = merged.map { $0.combined(with: totals) } ?? totals
        }
        guard let merged else { return LatencyHistogram() }
        return LatencyHistogram(
            bucketCounts: counts, sumNanos: merged.sumNanos, minNanos: merged.minNanos, maxNanos: merged.maxNanos)
    }

    /// Frees the stripes and the entry; only when no thread can record any more.
    func deallocate() {
        for stripe in stripes() { stripe.deallocate() }
        UnsafeMutableRawPointer(words).deallocate()
    }
}
