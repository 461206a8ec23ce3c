// The span flight recorder: the most recent span ends in a fixed ring, for timelines.
import CPerfShims
import Glibc

/// A fixed-size ring of the most recent finished spans: name, thread, start, duration, budget
/// and exit.
///
/// Every span end writes one slot: plain stores under a per-slot sequence number and a check
/// word. A ring of 1,024 slots or more has four lanes of that many slots, and a thread writes
/// only the lane of its histogram stripe, taking tickets from that lane's head in blocks of up to
/// 64: two threads ending spans at once write different cache lines, and never fetch a line the
/// other wrote a lap ago. Each lane keeps its own newest `capacity` spans, so the newest
/// `capacity` spans of all threads are always there; the lanes take 4× the slots of address
/// space, paid in memory only by lanes that threads write. Recording allocates nothing and takes
/// no lock; a lane's oldest entry is overwritten when the lane is full. ``snapshot()`` copies
/// the newest `capacity` whole entries out, oldest end first, skipping a slot that is being
/// written at that instant or whose check word does not match (two writers in one slot, when one
/// was descheduled for a whole lap of its lane), and never blocks a writer.
///
/// ```swift
/// let flight = FlightRecorder(capacity: 4096)!
/// let recorder = SpanRecorder(histograms: registry, pipeline: pipeline, flightRecorder: flight)
/// // … spans end …
/// let recent = flight.snapshot()   // oldest first
/// ```
public final class FlightRecorder: @unchecked Sendable {
    /// One recorded span.
    public struct Entry: Sendable, Equatable {
        /// The span name.
        public var name: String
        /// The kernel id of the thread that ended it.
        public var threadID: Int32
        /// CLOCK_MONOTONIC nanoseconds at its begin.
        public var startMonotonicNanos: UInt64
        /// How long it ran.
        public var durationNanos: UInt64
        /// Its budget, or `nil` for a span recorded every time.
        public var budgetNanos: UInt64?
        /// How it ended.
        public var exit: SpanExit
    }

    /// What ``snapshot()`` saw.
    public struct Snapshot: Sendable, Equatable {
        /// The newest whole entries (at most the capacity), oldest end (start + duration) first.
        public var entries: [Entry]
        /// Tickets handed out since the ring was made, by every lane: the spans recorded, plus up
        /// to one block (≤ 64) per thread taken but not used yet. Each lane keeps its newest entries.
        public var recorded: UInt64

        /// Creates a snapshot.
        public init(entries: [Entry], recorded: UInt64) {
            self.entries = entries
            self.recorded = recorded
        }
    }

    /// Slots in the ring.
    public let capacity: Int
    /// Shared by every writer; the C header documents the slot protocol. Immutable after init,
    /// hence `@unchecked Sendable`.
    @usableFromInline let ring: UnsafeMutablePointer<perf_flight_ring>
    /// The span memory holding the slots, when they live in one (kept alive with the ring).
    public let memory: SpanMemory?

    /// Makes a ring of `capacity` slots in process memory, rounded up to a power of two (at least
    /// 1, at most 2^20); nil when the memory cannot be allocated.
    public init?(capacity: Int) {
        var slots = 1
        while slots < min(max(capacity, 1), 1 << 20) { slots <<= 1 }
        guard !AllocationFaults.fails(.flightRing), let ring = perf_flight_ring_create(UInt64(slots)) else {
            return nil
        }
        self.capacity = slots
        self.ring = ring
        self.memory = nil
    }

    /// Makes a ring over the slots of `memory` (its configured ring capacity), so that a reader of
    /// a crashed process's memory finds its last spans; nil when the memory has no ring or the
    /// ring's bookkeeping cannot be allocated.
    public init?(memory: SpanMemory) {
        guard !AllocationFaults.fails(.flightRing), let slots = memory.ringSlots,
            let ring = perf_flight_ring_create_over(slots, UInt64(memory.configuration.ringCapacity))
        else { return nil }
        self.capacity = memory.configuration.ringCapacity
        self.ring = ring
        self.memory = memory
    }

    deinit { perf_flight_ring_destroy(ring) }

    /// Records one finished span. Lock-free, allocation-free.
    ///
    /// - Parameter nameRef: The name's reference in the span memory (what
    ///   ``HistogramRegistry/record(_:nanos:)`` returned), or 0.
    @inlinable @inline(__always)
    public func record(
        _ name: StaticString, nameRef: UInt32 = 0, startNanos: UInt64, durationNanos: UInt64, budgetNanos: UInt64?,
        exit: SpanExit
    ) {
        // One call with the name's words chosen first: the inline C body appears once in the
        // caller, which keeps a span's inlined end small enough to be inlined itself.
        let pointer: UnsafeRawPointer?
        let length: UInt32
        let reference: UInt32
        if name.hasPointerRepresentation {
            pointer = UnsafeRawPointer(name.utf8Start)
            length = UInt32(truncatingIfNeeded: min(name.utf8CodeUnitCount, Int(UInt32.max >> 1)))
            reference = nameRef
        } else {
            pointer = nil
            length = name.unicodeScalar.value | Self.scalarFlag
            reference = 0
        }
        perf_flight_record(
            ring, pointer, length, reference, startNanos, durationNanos, budgetNanos ?? .max, Self.code(exit))
    }

    /// Copies the ring's newest whole entries (at most ``capacity``), oldest end first.
    public func snapshot() -> Snapshot {
        let slots = UnsafeMutablePointer<perf_flight_slot>.allocate(
            capacity: Int(perf_flight_slot_count(UInt64(capacity))))
        defer { slots.deallocate() }
        var head: UInt64 = 0
        let count = Int(perf_flight_ring_read(ring, slots, &head))
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for slot in UnsafeBufferPointer(start: slots, count: count) {
            entries.append(
                Entry(
                    name: Self.name(of: slot), threadID: slot.tid, startMonotonicNanos: slot.start_ns,
                    durationNanos: slot.duration_ns, budgetNanos: slot.budget_ns == .max ? nil : slot.budget_ns,
                    exit: Self.exit(code: slot.exit)))
        }
        return Snapshot(entries: entries, recorded: head)
    }

    /// Set in `name_len` when the name is one Unicode scalar stored inline.
    @usableFromInline static let scalarFlag: UInt32 = 1 << 31

    /// The name of a recovered span whose name the memory did not hold.
    public static let unknownName = "(unnamed)"

    /// Exits by their code in a slot.
    static let exits: [SpanExit] = [.success, .failure, .cancelled, .superseded, .expired, .orphaned]

    /// The exit of a slot's code; an unknown code reads as the last (orphaned).
    static func exit(code: UInt32) -> SpanExit { exits[Int(min(code, UInt32(exits.count - 1)))] }

    @inlinable @inline(__always)
    static func code(_ exit: SpanExit) -> UInt32 {
        switch exit {
        case .success: 0
        case .failure: 1
        case .cancelled: 2
        case .superseded: 3
        case .expired: 4
        case .orphaned: 5
        }
    }

    private static func name(of slot: perf_flight_slot) -> String {
        guard let start = slot.name else {
            return Unicode.Scalar(slot.name_len & ~scalarFlag).map(String.init) ?? "?"
        }
        // The storage is NUL-terminated: never read past the terminator, whatever the length says.
        let bytes = UnsafeRawBufferPointer(start: start, count: strnlen(start, Int(slot.name_len)))
        return String(decoding: bytes, as: UTF8.self)
    }
}
