// One thread stripe of a name's histogram in span memory: sum, extremes and references to bucket
// chunks, updated either by its single owning thread with plain stores or by several threads
// with relaxed atomic adds.
import CPerfShims

/// A stripe: 576 bytes of the arena (see ``SpanMemoryLayout``) whose buckets live in 128-byte
/// chunks of 16, claimed on first use. The count is not stored: it is the sum of the buckets.
///
/// Every access goes through the C relaxed atomics, so a snapshot reading while the owner writes
/// is not a data race; on x86-64 and arm64 a relaxed load or store is a plain `mov`/`ldr`/`str`.
struct AtomicHistogramStripe {
    typealias L = SpanMemoryLayout
    let words: UnsafeMutablePointer<UInt64>
    let arena: UnsafeMutableRawPointer

    @inline(__always)
    init(arena: UnsafeMutableRawPointer, ref: UInt32) {
        self.arena = arena
        words = (arena + Int(ref) &* L.refUnit).assumingMemoryBound(to: UInt64.self)
    }

    private var chunkRefs: UnsafeMutablePointer<UInt32> {
        (UnsafeMutableRawPointer(words) + L.stripeChunkRefsOffset).assumingMemoryBound(to: UInt32.self)
    }

    /// The reference of the chunk holding bucket `index`, claiming it on first use; nil when the
    /// arena is full.
    @inline(__always)
    private func chunk(of index: Int, memory: SpanMemory) -> UInt32? {
        let group = index &>> L.bucketsPerChunkShift
        var ref = perf_atomic_load_u32_acquire(chunkRefs + group)
        if ref == 0 {
            ref = claimChunk(group, memory: memory)
            if ref == 0 { return nil }
        }
        return ref
    }

    /// The counter of bucket `index` in the chunk `ref`.
    @inline(__always)
    private func counter(_ index: Int, ref: UInt32) -> UnsafeMutablePointer<UInt64> {
        (arena + Int(ref) &* L.refUnit).assumingMemoryBound(to: UInt64.self) + (index & (L.bucketsPerChunk - 1))
    }

    /// Slow path: publishes a fresh (zeroed) chunk, or adopts the one another writer published.
    @inline(never)
    private func claimChunk(_ group: Int, memory: SpanMemory) -> UInt32 {
        let fresh = memory.allocate(bytes: L.chunkBytes)
        guard fresh != 0 else { return 0 }
        if perf_atomic_cas_u32(chunkRefs + group, 0, fresh) != 0 { return fresh }
        // Lost to a sharing thread: its chunk serves; ours stays unused (128 bytes, rare).
        return perf_atomic_load_u32_acquire(chunkRefs + group)
    }

    /// Hot path for the stripe's only writer: loads and stores, no `lock` prefix, bracketed by an
    /// odd sequence word so a reader of a killed process's stripe knows a record was cut short.
    ///
    /// The bucket tick is one record late: this record's bucket is left in the pending word and
    /// added to its chunk by the stripe's next record, and readers count the pending word as one
    /// more in its bucket. A store whose address depends on a fresh `rdtsc` makes the next `rdtsc`
    /// wait until that address is known (measured on AMD Zen: a span begun right after another
    /// ended paid ~9 ns for it); the pending word's address is fixed, and the late tick's address
    /// was known a record ago. Sum and extremes are not late.
    ///
    /// Correct only while the calling thread owns the stripe exclusively (see
    /// `perf_thread_stripe`): a concurrent writer's increment could otherwise be lost.
    /// - Returns: false when the arena had no room for the bucket's chunk (nothing recorded).
    @inline(__always)
    func recordExclusively(nanos: UInt64, memory: SpanMemory) -> Bool {
        let index = HistogramLayout.index(ofNanos: nanos)
        guard let ref = chunk(of: index, memory: memory) else { return false }
        tickExclusively(nanos: nanos, index: index, ref: ref)
        return true
    }

    /// ``recordExclusively(nanos:memory:)`` when the bucket's chunk exists already; false (and
    /// nothing written) when it does not. Calls nothing, so the span path's fast case keeps no
    /// register across a call.
    @inline(__always)
    func recordExclusivelyIfChunked(nanos: UInt64) -> Bool {
        let index = HistogramLayout.index(ofNanos: nanos)
        let ref = perf_atomic_load_u32_acquire(chunkRefs + (index &>> L.bucketsPerChunkShift))
        guard ref != 0 else { return false }
        tickExclusively(nanos: nanos, index: index, ref: ref)
        return true
    }

    /// The owner's record into chunk `ref` (see ``recordExclusively(nanos:memory:)``).
    @inline(__always)
    private func tickExclusively(nanos: UInt64, index: Int, ref: UInt32) {
        let sequence = perf_atomic_load_u64(words)
        perf_atomic_store_u64(words, sequence | 1)
        let inverted = ~nanos
        if inverted > perf_atomic_load_u64(words + L.stripeInvertedMinWord) {
            perf_atomic_store_u64(words + L.stripeInvertedMinWord, inverted)
        }
        if nanos > perf_atomic_load_u64(words + L.stripeMaxWord) {
            perf_atomic_store_u64(words + L.stripeMaxWord, nanos)
        }
        let pendingWord = words + L.stripePendingOffset / 8
        let pending = perf_atomic_load_u64(pendingWord)
        if pending != 0 {
            let late = counter(Int(truncatingIfNeeded: pending &- 1), ref: UInt32(truncatingIfNeeded: pending &>> 32))
            perf_atomic_store_u64(late, perf_atomic_load_u64(late) &+ 1)
        }
        perf_atomic_store_u64(pendingWord, UInt64(ref) &<< 32 | UInt64(index &+ 1))
        let sum = words + L.stripeSumWord
        perf_atomic_store_u64(sum, perf_atomic_load_u64(sum) &+ nanos)
        perf_atomic_store_u64(words, (sequence | 1) &+ 1)
    }

    /// Hot path for a stripe several threads share: two relaxed atomic adds, plus a CAS only when
    /// the value is a new extreme.
    @inline(__always)
    func recordShared(nanos: UInt64, memory: SpanMemory) -> Bool {
        let index = HistogramLayout.index(ofNanos: nanos)
        guard let ref = chunk(of: index, memory: memory) else { return false }
        let bucket = counter(index, ref: ref)
        raise(L.stripeInvertedMinWord, to: ~nanos)
        raise(L.stripeMaxWord, to: nanos)
        perf_atomic_add_u64(bucket, 1)
        perf_atomic_add_u64(words + L.stripeSumWord, nanos)
        return true
    }

    @inline(__always)
    private func raise(_ word: Int, to value: UInt64) {
        var current = perf_atomic_load_u64(words + word)
        while value > current {
            if perf_atomic_cas_u64(words + word, current, value) != 0 { return }
            current = perf_atomic_load_u64(words + word)
        }
    }
}
