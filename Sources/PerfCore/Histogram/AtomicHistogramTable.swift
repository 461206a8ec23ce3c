// The registry's lock-free storage: an open-addressing table from a StaticString's address to the
// name's striped histogram.
import CPerfShims

/// A fixed open-addressing table of `AtomicHistogramEntry` pointers, keyed by address.
///
/// Slots go from nil to an entry exactly once (a pointer CAS) and never change again, so a reader
/// that finds its key can use the entry without a lock for the table's lifetime.
struct AtomicHistogramTable: @unchecked Sendable {
    // @unchecked: the slots are only touched through the C atomics of CPerfShims, never plain accesses.
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
