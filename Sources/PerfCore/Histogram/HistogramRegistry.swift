// Per-name latency histograms, ticked on every span end without a lock or an allocation.
import Synchronization

/// Latency histograms by span name, safe to record into from any thread.
///
/// The hot path, ``record(_:nanos:)`` with a `StaticString`, takes no lock and allocates nothing
/// once the calling thread has recorded the name: the name's address finds its histogram in a fixed
/// open-addressing table, and the histogram is striped by thread. Each of the first 16 threads
/// alive at once owns a stripe and updates it with plain loads and stores (no `lock` prefix, no
/// cache line shared with another writer); threads beyond those share 16 further stripes updated
/// with relaxed atomic adds. A stripe's counters (16.9 KiB) are allocated the first time a thread
/// mapped to it records the name, so a name costs one stripe per recording thread, at most 32.
/// Names only known at run time go through ``record(name:nanos:)``, a slower path behind a mutex.
///
/// The table holds ``capacity`` distinct static names; records of further names are dropped and
/// counted in ``droppedRecordCount`` instead of growing memory on the hot path.
///
/// ```swift
/// let histograms = HistogramRegistry()
/// histograms.record("api.get", nanos: end - start)
/// let p99 = histograms.snapshot()["api.get"]?.quantile(0.99)
/// ```
///
/// - Note: Two `StaticString`s with the same text (literals in different modules) are different
///   keys in the table but the same name in ``snapshot()``, which merges them.
public final class HistogramRegistry: Sendable {
    private let table: AtomicHistogramTable
    private let dropped = Atomic<UInt64>(0)
    private let dynamicHistograms = Mutex<[String: LatencyHistogram]>([:])

    /// Creates an empty registry.
    ///
    /// - Parameter capacity: How many distinct static names it can hold; rounded up to a power of
    ///   two, at least 1 and at most 2^20. Memory for the table is 8 bytes a slot; a name costs
    ///   320 bytes when first recorded, plus 16.9 KiB for each thread stripe that records it.
    public init(capacity: Int = 1024) {
        table = AtomicHistogramTable(capacity: capacity)
    }

    deinit {
        table.deallocate()
    }

    /// How many distinct static names the registry holds before it starts dropping records.
    public var capacity: Int { table.slotCount }

    /// Records dropped because their static name found the table full.
    public var droppedRecordCount: UInt64 { dropped.load(ordering: .relaxed) }

    /// Hot path: ticks the histogram of a static name.
    ///
    /// Lock-free, and allocation-free after the calling thread's first record of the name.
    ///
    /// - Parameters:
    ///   - name: The span name. Its address is the key, so pass the literal itself.
    ///   - nanos: The duration in nanoseconds.
    public func record(_ name: StaticString, nanos: UInt64) {
        guard name.hasPointerRepresentation else {
            // A single-scalar literal has no address to key on; rare enough for the slow path.
            record(name: name.description, nanos: nanos)
            return
        }
        let key = UnsafeRawPointer(name.utf8Start)
        guard let entry = table.entry(key: key, length: name.utf8CodeUnitCount) else {
            dropped.wrappingAdd(1, ordering: .relaxed)
            return
        }
        entry.record(nanos: nanos)
    }

    /// Slow path for names only known at run time (hang targets, recovered spans).
    ///
    /// Takes a mutex and hashes the string; the histogram merges with a static name of the same
    /// text in ``snapshot()``. Never dropped.
    ///
    /// - Parameters:
    ///   - name: The name.
    ///   - nanos: The duration in nanoseconds.
    public func record(name: String, nanos: UInt64) {
        dynamicHistograms.withLock { $0[name, default: LatencyHistogram()].record(nanos: nanos) }
    }

    /// A copy of every histogram, by name.
    ///
    /// Reads every thread stripe with relaxed loads while other threads may keep recording, so a
    /// record in flight may be missing or only partly seen; each histogram is nevertheless internally
    /// consistent (its count is the sum of its buckets; min and max lie in its outermost buckets)
    /// and every record that finished before the call began is included.
    public func snapshot() -> [String: LatencyHistogram] {
        var result: [String: LatencyHistogram] = [:]
        for entry in table.entries() {
            let histogram = entry.snapshot()
            guard !histogram.isEmpty else { continue }
            result[entry.name, default: LatencyHistogram()].merge(histogram)
        }
        let dynamic = dynamicHistograms.withLock { $0 }
        for (name, histogram) in dynamic {
            result[name, default: LatencyHistogram()].merge(histogram)
        }
        return result
    }
}
