// Numbers every record, applies the redaction hook, and hands it to each sink in order.
import Foundation
import Glibc
import Synchronization

/// Routes records from emitters to sinks, in one global order.
///
/// Each emitted record gets the next sequence number under the pipeline's ordering lock, and is
/// offered, still under that lock, to every sink's lane: all sinks see records in sequence order.
/// No lock of the pipeline is held while a sink runs: an inline sink runs on the emitting thread
/// when it is free, and while another thread is inside it (a ledger write stalled on a slow disk)
/// the record waits in the sink's bounded backlog and the emitter returns at once. Emitting is a
/// slow path (a span over budget, a hang, a note); the scoped-span hot path never reaches the
/// pipeline.
///
/// ```swift
/// let pipeline = RecordPipeline()
/// pipeline.addSink(ledger, mode: .inline)
/// pipeline.addSink(exporter, mode: .buffered(capacity: 4096))
/// pipeline.emit(.note(NoteRecord(name: "socket.reconnect", wallNanos: now)))
/// pipeline.flush()
/// ```
public final class RecordPipeline: Sendable {
    enum Slot: Sendable {
        case inline(InlineDelivery)
        case buffered(BufferedDelivery)
        case concurrent(ConcurrentDelivery)
    }

    private struct State: Sendable {
        /// Every sink, in the order added.
        var slots: [Slot] = []
        /// The inline and buffered sinks: offered each record under this lock, in sequence order.
        var ordered: [Slot] = []
    }

    private let state = Mutex(State())
    /// The next record's number. Taken under `state`'s lock while ordered sinks exist (so they see
    /// numbers in order), with one atomic add otherwise.
    private let nextSequence = Atomic<UInt64>(1)
    /// Whether any inline or buffered sink exists: only then does emitting take the lock.
    private let hasOrdered = Atomic<Bool>(false)
    /// The concurrent sinks, read without a lock.
    private let concurrent = ConcurrentSinks()
    private let transform = Mutex<(@Sendable (Record) -> Record?)?>(nil)
    /// Whether a transform is set: emitting reads this flag, not the transform's lock, when none is.
    private let hasTransform = Atomic<Bool>(false)

    /// The default bound of an inline sink's backlog, in estimated bytes (``Record/estimatedBytes``).
    public static let defaultBacklogBytes = 4 << 20
    /// The least backlog bound that holds any one record's estimate with room to spare.
    public static let minimumBacklogBytes = 64 * 1024

    /// Creates a pipeline with no sinks: records emitted now are numbered and discarded.
    public init() {}

    deinit {
        state.withLock { state in
            for case .buffered(let delivery) in state.slots { delivery.stop() }
        }
    }

    /// Attaches a sink; it receives every record emitted after this call returns.
    ///
    /// - Parameters:
    ///   - sink: The consumer.
    ///   - mode: `.inline` to run on the emitting thread while the sink is free (its effect is then
    ///     complete when `emit` returns), or `.buffered(capacity:)` to run on the sink's own thread
    ///     from a bounded queue.
    ///   - backlogBytes: For `.inline`, the bound of the backlog that holds records while another
    ///     thread is inside the sink, in estimated bytes (``Record/estimatedBytes``); 4 MiB by default.
    public func addSink(
        _ sink: any RecordSink, mode: SinkMode, backlogBytes: Int = RecordPipeline.defaultBacklogBytes
    ) {
        let slot: Slot
        switch mode {
        case .inline: slot = .inline(InlineDelivery(sink: sink, capacityBytes: backlogBytes))
        case .buffered(let capacity): slot = .buffered(BufferedDelivery(sink: sink, capacity: capacity))
        case .concurrent: slot = .concurrent(ConcurrentDelivery(sink: sink))
        }
        state.withLock { state in
            state.slots.append(slot)
            if case .concurrent(let delivery) = slot {
                concurrent.append(delivery)
            } else {
                state.ordered.append(slot)
                hasOrdered.store(true, ordering: .releasing)
            }
        }
    }

    /// Installs the redaction/enrichment hook, run on every record before any sink sees it.
    ///
    /// Return the record (changed or not) to deliver it, `nil` to drop it. Dropping one half of a
    /// registered span's begin/end pair delivers ``Record/stripped`` instead, so pairs never split.
    /// Pass `nil` to remove the hook.
    public func setTransform(_ transform: (@Sendable (Record) -> Record?)?) {
        self.transform.withLock {
            $0 = transform
            hasTransform.store(transform != nil, ordering: .releasing)
        }
    }

    /// Numbers the record and delivers it to every sink.
    ///
    /// Returns once every free inline sink has handled it, and every busy inline sink and every
    /// buffered sink has it queued (or counted it dropped). Never waits for another thread's
    /// delivery: a sink stalled in another thread's `receive` delays only that thread.
    ///
    /// An inline sink may emit from `receive`: the record is numbered at once and delivered, on
    /// the same thread and before the outer `emit` returns, after the record being handled.
    public func emit(_ record: Record) {
        enqueue(record, underCallerLock: false)?.deliver()
    }

    /// Numbers the record and offers it to every sink, without calling any: the first half of
    /// ``emit(_:)``, for a caller that must fix a record's place in the order under a lock of its
    /// own (the span registry) and deliver it after releasing that lock.
    ///
    /// Returns the deliveries this thread now owns (nil when it owns none); call
    /// ``PendingDelivery/deliver()`` on each, in the order they were enqueued, before returning.
    ///
    /// Concurrent sinks are handed the record here, so they keep this order too, through
    /// ``RecordSink/receiveWithoutBlocking(_:)`` when `underCallerLock`: nothing that may wait
    /// (a ledger write) runs under the caller's lock.
    func enqueue(_ record: Record, underCallerLock: Bool = true) -> PendingDelivery? {
        guard let record = transformed(record) else { return nil }
        let me = UInt(pthread_self())
        var pending: PendingDelivery?
        let sequenced: SequencedRecord
        if hasOrdered.load(ordering: .acquiring) {
            (sequenced, pending) = state.withLock { state -> (SequencedRecord, PendingDelivery?) in
                let sequenced = SequencedRecord(
                    sequence: nextSequence.wrappingAdd(1, ordering: .relaxed).oldValue, record: record)
                return (sequenced, offer(sequenced, to: state.ordered, thread: me))
            }
        } else {
            sequenced = SequencedRecord(
                sequence: nextSequence.wrappingAdd(1, ordering: .relaxed).oldValue, record: record)
        }
        concurrent.deliver(sequenced, blocking: !underCallerLock)
        return pending
    }

    /// Offers the record to each ordered sink; the caller holds `state`'s lock.
    private func offer(_ sequenced: SequencedRecord, to slots: [Slot], thread me: UInt) -> PendingDelivery? {
        // The owned lanes as bits of slot indices (slots are only ever appended), so emitting
        // allocates no list; sinks past the 64th, if any, in an overflow list.
        var owned: UInt64 = 0
        var overflow: [InlineDelivery] = []
        for (index, slot) in slots.enumerated() {
            switch slot {
            case .inline(let lane):
                guard lane.offer(sequenced, thread: me) else { continue }
                if index < 64 { owned |= 1 << UInt64(index) } else { overflow.append(lane) }
            case .buffered(let delivery):
                delivery.enqueue(sequenced)
            case .concurrent:
                continue
            }
        }
        guard owned != 0 || !overflow.isEmpty else { return nil }
        return PendingDelivery(record: sequenced, slots: slots, owned: owned, overflow: overflow, thread: me)
    }

    /// Waits until every sink has handled every record emitted before this call: buffered sinks'
    /// queues and inline sinks' backlogs.
    ///
    /// Waits on each sink's condition, never by polling. Returns false if `timeoutNanos` passed
    /// first (a sink stuck in `receive`).
    @discardableResult
    public func flush(timeoutNanos: UInt64 = 10_000_000_000) -> Bool {
        let marks = state.withLock { state in
            state.slots.map { slot -> (Date) -> Bool in
                switch slot {
                case .inline(let lane):
                    let mark = lane.acceptedCount
                    return { lane.waitUntilProcessed(mark, deadline: $0) }
                case .buffered(let delivery):
                    let mark = delivery.acceptedCount
                    return { delivery.waitUntilProcessed(mark, deadline: $0) }
                case .concurrent(let delivery):
                    return { delivery.sink.waitUntilDone(deadline: $0) }
                }
            }
        }
        let deadline = Date(timeIntervalSinceNow: Double(timeoutNanos) / 1e9)
        return marks.allSatisfy { $0(deadline) }
    }

    /// Per-sink counts of delivered, failed and dropped records, in the order sinks were added.
    public var statistics: [SinkStatistics] {
        state.withLock { state in
            state.slots.map { slot in
                switch slot {
                case .inline(let lane):
                    lane.statistics()
                case .buffered(let delivery):
                    delivery.statistics()
                case .concurrent(let delivery):
                    delivery.counters.snapshot(sinkType: String(describing: type(of: delivery.sink)), mode: .concurrent)
                }
            }
        }
    }

    /// The number the next emitted record will get, minus one: how many records were emitted.
    public var emittedCount: UInt64 { nextSequence.load(ordering: .relaxed) - 1 }

    private func transformed(_ record: Record) -> Record? {
        guard hasTransform.load(ordering: .acquiring), let transform = transform.withLock({ $0 }) else { return record }
        if let result = transform(record) { return result }
        return record.pairedSpanID == nil ? nil : record.stripped
    }
}

/// A numbered record whose delivery to some inline sinks the enqueuing thread owns.
struct PendingDelivery: Sendable {
    let record: SequencedRecord
    let slots: [RecordPipeline.Slot]
    let owned: UInt64
    let overflow: [InlineDelivery]
    let thread: UInt

    /// Hands the record to each owned sink (and this thread's records queued behind it), with no
    /// lock held.
    func deliver() {
        var bits = owned
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            if case .inline(let lane) = slots[index] { lane.deliver(record, thread: thread) }
        }
        for lane in overflow { lane.deliver(record, thread: thread) }
    }
}

/// A `.concurrent` sink with its counters.
final class ConcurrentDelivery: Sendable {
    let sink: any RecordSink
    let counters = DeliveryCounters()

    init(sink: any RecordSink) { self.sink = sink }

    func deliver(_ record: SequencedRecord, blocking: Bool) {
        guard sink.accepts(record.record) else { return }
        do {
            if blocking { try sink.receive(record) } else { try sink.receiveWithoutBlocking(record) }
            counters.delivered.add(1, ordering: .relaxed)
        } catch {
            counters.failures.add(1, ordering: .relaxed)
        }
    }
}

/// The concurrent sinks, appended under the pipeline's lock and read by emitters without one: each
/// is stored before the count that shows it is published (release/acquire).
///
/// `@unchecked Sendable`: slots below `count` are written once, before `count` covers them.
final class ConcurrentSinks: @unchecked Sendable {
    static let capacity = 16
    private let slots = UnsafeMutablePointer<ConcurrentDelivery?>.allocate(capacity: ConcurrentSinks.capacity)
    private let count = Atomic<Int>(0)

    init() { slots.initialize(repeating: nil, count: Self.capacity) }

    /// Adds a sink; the caller holds the pipeline's lock (one appender at a time).
    func append(_ delivery: ConcurrentDelivery) {
        let index = count.load(ordering: .relaxed)
        precondition(index < Self.capacity, "RecordPipeline holds at most \(Self.capacity) concurrent sinks")
        slots[index] = delivery
        count.store(index + 1, ordering: .releasing)
    }

    func deliver(_ record: SequencedRecord, blocking: Bool) {
        let published = count.load(ordering: .acquiring)
        for index in 0..<published { slots[index]?.deliver(record, blocking: blocking) }
    }

    deinit {
        slots.deinitialize(count: Self.capacity)
        slots.deallocate()
    }
}
