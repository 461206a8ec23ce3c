// Per-name latency histograms, ticked on every span end without a lock or an allocation.
import Synchronization

/// Latency histograms by span name, safe to record into from any thread.
///
/// The hot path, ``record(_:nanos:)`` with a `StaticString`, takes no lock and allocates nothing:
/// the name's address finds its entry in a fixed open-addressing table, and the histogram is
/// striped by thread. Each of the first 16 threads alive at once owns a stripe and updates it with
/// plain loads and stores (no `lock` prefix, no cache line shared with another writer); threads
/// beyond those share 16 further stripes updated with relaxed atomic adds. Counters live in a
/// ``SpanMemory``: a file mapping that outlives a crash, or anonymous memory. A stripe and its
/// bucket chunks are carved from it the first time a thread records into them, so a thread
/// ending spans of a few durations costs about 1 KiB per name, on pages shared with others.
/// Names only known at run time go through ``record(name:nanos:)``, a slower path behind a mutex
/// that lives in process memory only.
///
/// The memory holds a fixed number of names and bytes; records that find no room are counted in
/// ``droppedRecordCount`` instead of growing memory on the hot path.
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
    /// Where the counters live.
    public let memory: SpanMemory
    /// `memory.arena`, kept here so the hot path loads it from this object, not the memory's (an
    /// immutable address, so sharing it is safe).
    nonisolated(unsafe) private let arena: UnsafeMutableRawPointer
    private let dynamicHistograms = Mutex<[String: LatencyHistogram]>([:])

    /// Creates an empty registry over anonymous memory. Traps when the address space cannot be
    /// had: for tests and benchmarks; `Perf.install` never calls it (it maps its own memory and
    /// reports a failure instead).
    ///
    /// - Parameter capacity: How many distinct static names it can hold; rounded up to a power of
    ///   two, at least 1 and at most 2^20.
    public convenience init(capacity: Int = 1024) {
        let memory: SpanMemory
        do {
            memory = try SpanMemory.anonymous(SpanMemory.Configuration(nameCapacity: capacity, ringCapacity: 0))
        } catch {
            fatalError("HistogramRegistry: \(error)")
        }
        self.init(memory: memory)
    }

    /// Creates a registry over `memory`; one registry per memory.
    public init(memory: SpanMemory) {
        self.memory = memory
        arena = memory.arena
        table = AtomicHistogramTable(capacity: memory.configuration.nameCapacity)
    }

    deinit {
        table.deallocate()
    }

    /// How many distinct static names the registry holds before it starts dropping records.
    public var capacity: Int { table.slotCount }

    /// Records dropped because the name table or the memory was full.
    public var droppedRecordCount: UInt64 { memory.droppedRecordCount }

    /// Hot path: ticks the histogram of a static name.
    ///
    /// Lock-free and allocation-free.
    ///
    /// - Parameters:
    ///   - name: The span name. Its address is the key, so pass the literal itself.
    ///   - nanos: The duration in nanoseconds.
    ///   - site: Where the span began; kept with the name when this is its first record.
    /// - Returns: The name's reference in the memory (what a flight recorder slot stores so that a
    ///   reader of a crashed process's memory can name the span), or 0 when it has none.
    @discardableResult
    public func record(_ name: StaticString, nanos: UInt64, site: CallSite? = nil) -> UInt32 {
        // The fast case calls nothing, and anything else starts over out of line, so the common
        // record keeps no value across a call (no callee-saved registers to save and restore).
        if name.hasPointerRepresentation, let entry = table.home(key: UnsafeRawPointer(name.utf8Start)),
            entry.recordOwned(nanos: nanos, arena: arena)
        {
            return entry.nameRef
        }
        return recordTheLongWay(name, nanos: nanos, site: site)
    }

    /// ``record(_:nanos:site:)``'s common case alone: ticks the histogram of a name this thread
    /// has recorded before (its home slot, its own stripe, its bucket's chunk) and returns the
    /// name's reference; returns 0, having recorded nothing, in any other case, for the caller to
    /// call ``record(_:nanos:site:)``. Takes no call site, so the span path passes two arguments
    /// fewer on every end; calls nothing.
    public func recordIfSeen(_ name: StaticString, nanos: UInt64) -> UInt32 {
        if name.hasPointerRepresentation, let entry = table.home(key: UnsafeRawPointer(name.utf8Start)),
            entry.recordOwned(nanos: nanos, arena: arena)
        {
            return entry.nameRef
        }
        return 0
    }

    /// ``record(_:nanos:site:)`` for every case: a new name or thread, a collision in the table, a
    /// shared stripe, a chunk to claim, or no room.
    @inline(never)
    private func recordTheLongWay(_ name: StaticString, nanos: UInt64, site: CallSite?) -> UInt32 {
        guard name.hasPointerRepresentation else {
            // A single-scalar literal has no address to key on; rare enough for the slow path.
            record(name: name.description, nanos: nanos)
            return 0
        }
        let key = UnsafeRawPointer(name.utf8Start)
        guard let entry = table.entry(key: key, length: name.utf8CodeUnitCount, site: site, memory: memory),
            entry.record(nanos: nanos, arena: arena, memory: memory)
        else {
            memory.countDroppedRecord()
            return 0
        }
        return entry.nameRef
    }

    /// The name's reference in the memory (its entry made if need be), or 0 when it has none: for
    /// flight recorder slots of spans that end without a histogram tick.
    public func reference(of name: StaticString, site: CallSite? = nil) -> UInt32 {
        guard name.hasPointerRepresentation,
            let entry = table.entry(
                key: UnsafeRawPointer(name.utf8Start), length: name.utf8CodeUnitCount, site: site, memory: memory)
        else { return 0 }
        return entry.nameRef
    }

    /// Counts an end in the name's tally (``SpanTally``): over budget, with its duration, when
    /// `overBudgetNanos` is set, and its exit unless it is `success`. A slow path (atomic adds,
    /// the block claimed on first use); an end that finds no room is counted in
    /// ``droppedRecordCount``.
    ///
    /// - Returns: The name's reference in the memory, as ``reference(of:site:)`` gives it (0 when
    ///   it has none), so a caller that also needs it looks the name up once.
    @discardableResult
    public func tally(_ name: StaticString, overBudgetNanos: UInt64?, exit: SpanExit, site: CallSite? = nil) -> UInt32 {
        guard name.hasPointerRepresentation,
            let entry = table.entry(
                key: UnsafeRawPointer(name.utf8Start), length: name.utf8CodeUnitCount, site: site, memory: memory)
        else {
            if overBudgetNanos != nil || exit != .success { memory.countDroppedRecord() }
            return 0
        }
        if !entry.tally(overBudgetNanos: overBudgetNanos, exit: exit, memory: memory) { memory.countDroppedRecord() }
        return entry.nameRef
    }

    /// Every name's tally, by name: names with no over-budget or non-success end are absent.
    public func tallies() -> [String: SpanTally] {
        memory.image.histograms().tallies
    }

    /// Slow path for names only known at run time (hang targets, recovered spans).
    ///
    /// Takes a mutex and hashes the string; the histogram merges with a static name of the same
    /// text in ``snapshot()``. Never dropped, and kept in process memory only.
    ///
    /// - Parameters:
    ///   - name: The name.
    ///   - nanos: The duration in nanoseconds.
    public func record(name: String, nanos: UInt64) {
        dynamicHistograms.withLock { $0[name, default: LatencyHistogram()].record(nanos: nanos) }
    }

    /// Where each static name's first span began (`Module/File.swift:88`), by name: the call
    /// sites of the names in ``snapshot()`` that recorded one (two literals of one text may give two).
    public func sites() -> [String: [String]] {
        memory.image.sites()
    }

    /// A copy of every histogram, by name.
    ///
    /// Reads every thread stripe with relaxed loads while other threads may keep recording, so a
    /// record in flight may be missing or only partly seen; each histogram is nevertheless internally
    /// consistent (its count is the sum of its buckets; min and max lie in its outermost buckets)
    /// and every record that finished before the call began is included.
    public func snapshot() -> [String: LatencyHistogram] {
        var result = memory.image.histograms().byName
        let dynamic = dynamicHistograms.withLock { $0 }
        for (name, histogram) in dynamic {
            result[name, default: LatencyHistogram()].merge(histogram)
        }
        return result
    }
}
