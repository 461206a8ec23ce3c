// Numbers every record, applies the redaction hook, and hands it to each sink in order.
import Foundation
import Glibc
import Synchronization

/// Routes records from emitters to sinks, in one global order.
///
/// Each emitted record gets the next sequence number under the pipeline's ordering lock, and is
/// handed, still under that lock, to every inline sink and to every buffered sink's queue: all
/// sinks see records in sequence order. Emitting is a slow path (a span over budget, a hang, a
/// note); the scoped-span hot path never reaches the pipeline.
///
/// ```swift
/// let pipeline = RecordPipeline()
/// pipeline.addSink(ledger, mode: .inline)
/// pipeline.addSink(exporter, mode: .buffered(capacity: 4096))
/// pipeline.emit(.note(NoteRecord(name: "socket.reconnect", wallNanos: now)))
/// pipeline.flush()
/// ```
public final class RecordPipeline: Sendable {
    private enum Slot: Sendable {
        case inline(any RecordSink, DeliveryCounters)
        case buffered(BufferedDelivery)
    }

    private struct State: Sendable {
        var slots: [Slot] = []
        var nextSequence: UInt64 = 1
    }

    private let state = Mutex(State())
    private let transform = Mutex<(@Sendable (Record) -> Record?)?>(nil)
    /// The thread currently delivering under `state`, so an inline sink that emits is queued
    /// behind the current record instead of deadlocking on the non-recursive lock.
    private let deliveringThread = Atomic<UInt>(0)
    private let reentrantRecords = Mutex<[Record]>([])

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
    ///   - mode: `.inline` to run on the emitting thread (its effect is complete when `emit`
    ///     returns), or `.buffered(capacity:)` to run on the sink's own thread from a bounded queue.
    public func addSink(_ sink: any RecordSink, mode: SinkMode) {
        let slot: Slot
        switch mode {
        case .inline: slot = .inline(sink, DeliveryCounters())
        case .buffered(let capacity): slot = .buffered(BufferedDelivery(sink: sink, capacity: capacity))
        }
        state.withLock { $0.slots.append(slot) }
    }

    /// Installs the redaction/enrichment hook, run on every record before any sink sees it.
    ///
    /// Return the record (changed or not) to deliver it, `nil` to drop it. Dropping one half of a
    /// registered span's begin/end pair delivers ``Record/stripped`` instead, so pairs never split.
    /// Pass `nil` to remove the hook.
    public func setTransform(_ transform: (@Sendable (Record) -> Record?)?) {
        self.transform.withLock { $0 = transform }
    }

    /// Numbers the record and delivers it to every sink.
    ///
    /// Returns once inline sinks have handled it and buffered sinks have it queued (or counted it
    /// dropped). Never waits for a buffered sink.
    public func emit(_ record: Record) {
        guard let record = transformed(record) else { return }
        let me = UInt(pthread_self())
        if deliveringThread.load(ordering: .acquiring) == me {
            reentrantRecords.withLock { $0.append(record) }
            return
        }
        state.withLock { state in
            deliveringThread.store(me, ordering: .releasing)
            deliver(record, in: &state)
            while let queued = reentrantRecords.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                deliver(queued, in: &state)
            }
            deliveringThread.store(0, ordering: .releasing)
        }
    }

    /// Waits until buffered sinks have handled every record emitted before this call.
    ///
    /// Waits on each sink's condition, never by polling. Returns false if `timeoutNanos` passed
    /// first (a sink stuck in `receive`).
    @discardableResult
    public func flush(timeoutNanos: UInt64 = 10_000_000_000) -> Bool {
        let marks = state.withLock { state in
            state.slots.compactMap { slot -> (BufferedDelivery, UInt64)? in
                guard case .buffered(let delivery) = slot else { return nil }
                return (delivery, delivery.acceptedCount)
            }
        }
        let deadline = Date(timeIntervalSinceNow: Double(timeoutNanos) / 1e9)
        return marks.allSatisfy { $0.0.waitUntilProcessed($0.1, deadline: deadline) }
    }

    /// Per-sink counts of delivered, failed and dropped records, in the order sinks were added.
    public var statistics: [SinkStatistics] {
        state.withLock { state in
            state.slots.map { slot in
                switch slot {
                case .inline(let sink, let counters):
                    counters.snapshot(sinkType: String(describing: type(of: sink)), mode: .inline)
                case .buffered(let delivery):
                    delivery.statistics()
                }
            }
        }
    }

    /// The number the next emitted record will get, minus one: how many records were emitted.
    public var emittedCount: UInt64 { state.withLock { $0.nextSequence - 1 } }

    private func transformed(_ record: Record) -> Record? {
        guard let transform = transform.withLock({ $0 }) else { return record }
        if let result = transform(record) { return result }
        return record.pairedSpanID == nil ? nil : record.stripped
    }

    private func deliver(_ record: Record, in state: inout State) {
        let sequenced = SequencedRecord(sequence: state.nextSequence, record: record)
        state.nextSequence += 1
        for slot in state.slots {
            switch slot {
            case .inline(let sink, let counters):
                do {
                    try sink.receive(sequenced)
                    counters.delivered.add(1, ordering: .relaxed)
                } catch {
                    counters.failures.add(1, ordering: .relaxed)
                }
            case .buffered(let delivery):
                delivery.enqueue(sequenced)
            }
        }
    }
}
