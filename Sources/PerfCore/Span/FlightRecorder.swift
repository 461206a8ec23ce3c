// The span flight recorder: the most recent span ends in a fixed ring, for timelines.
import CPerfShims
import Glibc

/// A fixed-size ring of the most recent finished spans: name, thread, start, duration, budget
/// and exit.
///
/// Every span end writes one slot: plain stores under a per-slot sequence number and a check
/// word (a thread takes tickets from the shared head in blocks of up to 16, so two threads
/// rarely touch one cache line). Recording allocates nothing and takes no lock; the oldest entry
/// is overwritten when the ring is full. ``snapshot()`` copies the whole entries out, skipping a
/// slot that is being written at that instant or whose check word does not match (two writers
/// in one slot, when one was descheduled for a whole lap of the ring), and never blocks a writer.
///
/// ```swift
/// let flight = FlightRecorder(capacity: 4096)
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
        /// Whole entries, oldest first.
        public var entries: [Entry]
        /// Tickets handed out since the ring was made: the spans recorded, plus up to one block
        /// (≤ 16) per thread taken but not used yet. The ring keeps the newest entries.
        public var recorded: UInt64
    }

    /// Slots in the ring.
    public let capacity: Int
    /// Shared by every writer; the C header documents the slot protocol. Immutable after init,
    /// hence `@unchecked Sendable`.
    @usableFromInline let ring: UnsafeMutablePointer<perf_flight_ring>

    /// Makes a ring of `capacity` slots, rounded up to a power of two (at least 1, at most 2^20).
    public init(capacity: Int) {
        var slots = 1
        while slots < min(max(capacity, 1), 1 << 20) { slots <<= 1 }
        guard let ring = perf_flight_ring_create(UInt64(slots)) else {
            fatalError("FlightRecorder: cannot allocate \(slots) slots")
        }
        self.capacity = slots
        self.ring = ring
    }

    deinit { perf_flight_ring_destroy(ring) }

    /// Records one finished span. Lock-free, allocation-free.
    @inlinable @inline(__always)
    public func record(
        _ name: StaticString, startNanos: UInt64, durationNanos: UInt64, budgetNanos: UInt64?, exit: SpanExit
    ) {
        let budget = budgetNanos ?? .max
        if name.hasPointerRepresentation {
            perf_flight_record(
                ring, name.utf8Start, UInt64(name.utf8CodeUnitCount), startNanos, durationNanos, budget,
                Self.code(exit))
        } else {
            perf_flight_record(
                ring, nil, UInt64(name.unicodeScalar.value) | Self.scalarFlag, startNanos, durationNanos, budget,
                Self.code(exit))
        }
    }

    /// Copies the ring's whole entries, oldest first.
    public func snapshot() -> Snapshot {
        let slots = UnsafeMutablePointer<perf_flight_slot>.allocate(capacity: capacity)
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
                    exit: Self.exits[Int(min(slot.exit, UInt32(Self.exits.count - 1)))]))
        }
        return Snapshot(entries: entries, recorded: head)
    }

    /// Set in `name_len` when the name is one Unicode scalar stored inline.
    @usableFromInline static let scalarFlag: UInt64 = 1 << 63

    /// Exits by their code in a slot.
    static let exits: [SpanExit] = [.success, .failure, .cancelled, .superseded, .expired, .orphaned]

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
            return Unicode.Scalar(UInt32(truncatingIfNeeded: slot.name_len & ~scalarFlag)).map(String.init) ?? "?"
        }
        // The storage is NUL-terminated: never read past the terminator, whatever the length says.
        let bytes = UnsafeRawBufferPointer(start: start, count: strnlen(start, Int(slot.name_len)))
        return String(decoding: bytes, as: UTF8.self)
    }
}
