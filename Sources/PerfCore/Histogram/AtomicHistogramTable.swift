// The registry's lock-free index: an open-addressing table from a StaticString's address to the
// name's entry in span memory.
import CPerfShims
import Synchronization

/// Serialises the making of entries (once per name), so that threads seeing a new name at once
/// do not each make one and waste the memory's fixed number of entries on the losers.
final class EntryCreationLock: Sendable {
    let mutex = Mutex<Void>(())
}

/// A fixed open-addressing table of entry pointers (into a ``SpanMemory``), keyed by address.
///
/// Slots go from nil to an entry exactly once (a pointer CAS) and never change again, so a reader
/// that finds its key can use the entry without a lock for the table's lifetime. The table lives
/// in process memory: its keys are addresses, meaningless to any other process.
struct AtomicHistogramTable: @unchecked Sendable {
    // @unchecked: the slots are only touched through the C atomics of CPerfShims, never plain accesses.
    let slots: UnsafeMutablePointer<UnsafeRawPointer?>
    let slotCount: Int
    /// The hash bits that pick a slot start here: the top 20 of the 64-bit product (the most a
    /// table has, 2^20 slots, uses them all; a smaller one masks them). A constant, so the span
    /// path shifts by an immediate.
    private static let hashShift: UInt64 = 44
    private let creation = EntryCreationLock()

    /// Creates a table of `capacity` slots (a power of two, the memory's name capacity).
    init(capacity: Int) {
        slotCount = capacity
        precondition(capacity > 0 && capacity <= 1 << 20 && capacity & (capacity - 1) == 0)
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
    }

    /// The entry of the name at `key`, created on first sight (with `site`, where its first span
    /// began); nil when the table or the memory is full.
    ///
    /// The hot path is the name found in its home slot: a multiply, a shift, one load and one
    /// compare. Anything else (a collision, a new name) goes out of line, so the span path keeps
    /// none of the probe loop's registers.
    @inline(__always)
    func entry(key: UnsafeRawPointer, length: Int, site: CallSite?, memory: SpanMemory) -> AtomicHistogramEntry? {
        // Fibonacci hashing spreads the (aligned, clustered) literal addresses over the table.
        let hash = UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15
        let home = Int(truncatingIfNeeded: hash &>> Self.hashShift) & (slotCount &- 1)
        if let found = perf_atomic_load_ptr_acquire(slots + home) {
            let entry = AtomicHistogramEntry(found)
            if entry.holds(key: key) { return entry }
        }
        return probe(from: home, key: key, length: length, site: site, memory: memory)
    }

    /// The entry of the name at `key` when it sits in its home slot, else nil: the span path's
    /// fast case, one multiply, one load and one compare, calling nothing.
    @inline(__always)
    func home(key: UnsafeRawPointer) -> AtomicHistogramEntry? {
        let hash = UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15
        guard
            let found = perf_atomic_load_ptr_acquire(
                slots + (Int(truncatingIfNeeded: hash &>> Self.hashShift) & (slotCount &- 1)))
        else { return nil }
        let entry = AtomicHistogramEntry(found)
        return entry.holds(key: key) ? entry : nil
    }

    /// Slow path: probes on from `home` (whose slot did not hold the name), making the entry in
    /// the first empty slot.
    @inline(never)
    private func probe(
        from home: Int, key: UnsafeRawPointer, length: Int, site: CallSite?, memory: SpanMemory
    ) -> AtomicHistogramEntry? {
        var slot = home
        for _ in 0..<slotCount {
            if let found = perf_atomic_load_ptr_acquire(slots + slot) {
                let entry = AtomicHistogramEntry(found)
                if entry.holds(key: key) { return entry }
            } else {
                switch claim(slot: slot, key: key, length: length, site: site, memory: memory) {
                case .entry(let entry): return entry
                case .full: return nil
                case .taken: break
                }
            }
            slot = (slot + 1) & (slotCount - 1)
        }
        return nil
    }

    private enum Claim {
        case entry(AtomicHistogramEntry)
        /// Another name won the slot: probe on.
        case taken
        /// No entry or arena left: stop probing.
        case full
    }

    /// Slow path: publishes a fresh entry in an empty slot. Under the creation lock, so an entry is
    /// made only for a slot still empty: every slot filled while this thread waited is seen first.
    @inline(never)
    private func claim(slot: Int, key: UnsafeRawPointer, length: Int, site: CallSite?, memory: SpanMemory) -> Claim {
        creation.mutex.withLock { _ in
            if let winner = perf_atomic_load_ptr_acquire(slots + slot) {
                // Another thread filled the slot first; it may have been for this very name.
                let entry = AtomicHistogramEntry(winner)
                return entry.holds(key: key) ? .entry(entry) : .taken
            }
            guard let fresh = AtomicHistogramEntry.make(key: key, length: length, site: site, memory: memory) else {
                return .full
            }
            // Every writer of the slots holds the lock: the CAS cannot fail.
            _ = perf_atomic_cas_ptr(slots + slot, nil, UnsafeRawPointer(fresh.raw))
            return .entry(fresh)
        }
    }

    /// Frees the slots; only when no thread can record any more.
    func deallocate() {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
    }
}
