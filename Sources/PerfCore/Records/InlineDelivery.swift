// One inline sink's lane: delivery on the emitting thread while the sink is free, a backlog bounded
// in bytes drained elsewhere in batches while another thread is inside it. No pipeline lock is
// held in `receive`.
import Dispatch
import Foundation
import Glibc

/// Feeds one inline sink in sequence order without holding the pipeline's lock across `receive`.
///
/// The pipeline offers each record under its ordering lock, so offers arrive in sequence order.
/// An offer to a free lane makes the offering thread the lane's owner: it calls `receive` itself,
/// after the pipeline lock is released, and its record is handled when `emit` returns. An offer to
/// a busy lane (another thread is in `receive`, stalled on a disk perhaps) is appended to a backlog
/// bounded in bytes (``Record/estimatedBytes``) and the emitter returns at once; a record that does
/// not fit is dropped and counted, and the lane's next delivery tells the sink how many it lost
/// (``RecordSink/receiveDropped(_:cause:)``) before it goes idle, so no loss is silent. The owner
/// drains backlog records its own thread emitted (a sink that emits from `receive`), then hands the
/// rest to the lane's serial drain queue, which takes them in batches
/// (``RecordSink/receive(batch:)``: the ledger writes a batch with one `write(2)`): no emitter ever
/// waits for another's delivery, and at most one thread is in `receive` at a time, so the sink
/// sees records in sequence order.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition` (flush waits on it).
final class InlineDelivery: @unchecked Sendable {
    let sink: any RecordSink
    let capacity: Int
    let counters = DeliveryCounters()
    private let condition = NSCondition()
    /// Records waiting while the lane is busy, with the thread that emitted each and its estimated bytes.
    private let backlog: BoundedFIFO<(record: SequencedRecord, thread: UInt, bytes: Int)>
    /// The backlog's bound, in estimated bytes.
    let capacityBytes: Int
    /// Estimated bytes in the backlog now.
    private var queuedBytes = 0
    /// Records dropped since the sink was last told.
    private var unreportedDrops: UInt64 = 0
    /// A thread (an emitter, or the drain queue) is delivering: the next offer must wait in line.
    private var busy = false
    /// Records accepted (delivered at once or queued), ever; `flush` waits for `processed` to reach a mark.
    private var accepted: UInt64 = 0
    /// Records handed to the sink (delivered or failed).
    private var processed: UInt64 = 0
    /// Threads in ``waitUntilProcessed(_:deadline:)``: a delivery wakes them only when there are any.
    private var waiters = 0
    private let drainQueue = DispatchQueue(label: "perf.sink.inline-backlog")

    /// The most records one batch of the drain hands the sink.
    static let batchLimit = 512

    init(sink: any RecordSink, capacityBytes: Int = RecordPipeline.defaultBacklogBytes) {
        self.sink = sink
        self.capacityBytes = max(1, capacityBytes)
        // No record is estimated below `Record.minimumEstimatedBytes`: the byte bound binds first.
        self.capacity = max(1, self.capacityBytes / Record.minimumEstimatedBytes)
        self.backlog = BoundedFIFO(capacity: self.capacity)
    }

    /// Called under the pipeline's ordering lock. True when the caller now owns the lane and must
    /// call ``deliver(_:)`` with the record once it has released that lock; false when the record
    /// was queued behind the current owner (or dropped, the backlog being full), or is one the
    /// sink does not accept.
    func offer(_ record: SequencedRecord, thread: UInt) -> Bool {
        guard sink.accepts(record.record) else { return false }
        condition.lock()
        defer { condition.unlock() }
        if !busy {
            busy = true
            accepted += 1
            return true
        }
        let bytes = record.record.estimatedBytes
        guard queuedBytes + bytes <= capacityBytes, backlog.append((record, thread, bytes)) else {
            counters.dropped.add(1, ordering: .relaxed)
            unreportedDrops += 1
            return false
        }
        queuedBytes += bytes
        accepted += 1
        return false
    }

    /// Delivers the record whose offer made this thread the owner, then the backlog records this
    /// thread emitted meanwhile; the first record emitted by another thread goes to the drain queue
    /// with the ownership, so this thread returns after its own records only.
    func deliver(_ record: SequencedRecord, thread: UInt) {
        var next: SequencedRecord? = record
        while let current = next {
            receive(current)
            condition.lock()
            processed += 1
            reportDrops()
            if backlog.isEmpty {
                busy = false
                next = nil
            } else if backlog.first?.thread == thread {
                next = take()
            } else {
                wakeWaiters()
                condition.unlock()
                drainQueue.async { self.drain() }
                return
            }
            wakeWaiters()
            condition.unlock()
        }
    }

    /// Waits until every record accepted before `mark` was handed to the sink; false if `deadline`
    /// passed first.
    func waitUntilProcessed(_ mark: UInt64, deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        waiters += 1
        defer { waiters -= 1 }
        while processed < mark {
            if !condition.wait(until: deadline) { return processed >= mark }
        }
        return true
    }

    /// Wakes the threads waiting for `processed` to move, if any; the caller holds `condition`
    /// (where `waiters` changes), so none can be missed.
    private func wakeWaiters() {
        if waiters > 0 { condition.broadcast() }
    }

    var acceptedCount: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return accepted
    }

    func statistics() -> SinkStatistics {
        counters.snapshot(sinkType: String(describing: type(of: sink)), mode: .inline)
    }

    /// The drain queue's loop: owns the lane until the backlog is empty, handing the sink up to
    /// ``batchLimit`` records at a time.
    private func drain() {
        var batch: [SequencedRecord] = []
        batch.reserveCapacity(Self.batchLimit)
        condition.lock()
        while true {
            reportDrops()
            while batch.count < Self.batchLimit, let record = take() { batch.append(record) }
            if batch.isEmpty { break }
            condition.unlock()
            let failed = sink.receive(batch: batch)
            counters.failures.add(UInt64(failed), ordering: .relaxed)
            counters.delivered.add(UInt64(batch.count - failed), ordering: .relaxed)
            condition.lock()
            processed += UInt64(batch.count)
            batch.removeAll(keepingCapacity: true)
            wakeWaiters()
        }
        busy = false
        condition.unlock()
    }

    /// The backlog's oldest record; the caller holds `condition`.
    private func take() -> SequencedRecord? {
        guard let (record, _, bytes) = backlog.removeFirst() else { return nil }
        queuedBytes -= bytes
        return record
    }

    /// Tells the sink of the records dropped since it was last told; the caller holds `condition`
    /// and owns the lane (so the sink is called by one thread at a time), and holds it again on
    /// return with no drop untold: drops made while the sink was being told are told too. Drops
    /// happen only while the lane is busy, and its owner calls this before it lets the lane go
    /// idle (with the lock held from here to then): every drop is reported.
    private func reportDrops() {
        while unreportedDrops > 0 {
            let count = unreportedDrops
            unreportedDrops = 0
            condition.unlock()
            sink.receiveDropped(count, cause: .backlog)
            condition.lock()
        }
    }

    private func receive(_ record: SequencedRecord) {
        do {
            try sink.receive(record)
            counters.delivered.add(1, ordering: .relaxed)
        } catch {
            counters.failures.add(1, ordering: .relaxed)
        }
    }
}
