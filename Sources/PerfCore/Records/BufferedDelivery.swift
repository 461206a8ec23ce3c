// One buffered sink's bounded queue and the dedicated thread that drains it.
import Foundation
import Synchronization

/// Feeds one buffered sink from a bounded FIFO on its own thread.
///
/// Enqueueing takes a short lock and signals a condition: it never waits for the sink. The
/// delivery thread calls the sink with no lock held, so a slow sink delays only itself.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition` (a Synchronization
/// `Mutex` cannot be waited on, and the delivery thread must sleep until there is work).
final class BufferedDelivery: @unchecked Sendable {
    let sink: any RecordSink
    let capacity: Int
    private let counters = DeliveryCounters()
    private let condition = NSCondition()
    private let queue: BoundedFIFO<SequencedRecord>
    /// Records accepted into the queue, ever; `flush` waits for `processed` to reach a mark.
    private var accepted: UInt64 = 0
    /// Records taken off the queue and handed to the sink (delivered or failed).
    private var processed: UInt64 = 0
    private var stopping = false

    init(sink: any RecordSink, capacity: Int) {
        self.sink = sink
        self.capacity = max(1, capacity)
        self.queue = BoundedFIFO(capacity: self.capacity)
        let thread = Thread { [self] in self.run() }
        thread.name = "perf.sink"
        thread.start()
    }

    /// Appends a record unless the queue is full; never blocks on the sink.
    func enqueue(_ record: SequencedRecord) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, queue.append(record) else {
            counters.dropped.add(1, ordering: .relaxed)
            return
        }
        accepted += 1
        condition.signal()
    }

    /// How many records have been accepted so far: the mark `waitUntilProcessed` waits for.
    var acceptedCount: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return accepted
    }

    /// Waits on the condition until every record accepted before `mark` was handed to the sink.
    /// Returns false if `deadline` passed first.
    func waitUntilProcessed(_ mark: UInt64, deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while processed < mark {
            if !condition.wait(until: deadline) { return processed >= mark }
        }
        return true
    }

    /// Lets the thread finish what is queued, then exit.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    func statistics() -> SinkStatistics {
        counters.snapshot(sinkType: String(describing: type(of: sink)), mode: .buffered(capacity: capacity))
    }

    private func run() {
        while let record = next() {
            do {
                try sink.receive(record)
                counters.delivered.add(1, ordering: .relaxed)
            } catch {
                counters.failures.add(1, ordering: .relaxed)
            }
            condition.lock()
            processed += 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The next queued record, waiting for one; nil once stopped and drained.
    private func next() -> SequencedRecord? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let record = queue.removeFirst() { return record }
            if stopping { return nil }
            condition.wait()
        }
    }
}

/// Counters shared by inline and buffered deliveries.
final class DeliveryCounters: Sendable {
    let delivered = Atomic<UInt64>(0)
    let failures = Atomic<UInt64>(0)
    let dropped = Atomic<UInt64>(0)

    func snapshot(sinkType: String, mode: SinkMode) -> SinkStatistics {
        SinkStatistics(
            sinkType: sinkType, mode: mode, delivered: delivered.load(ordering: .relaxed),
            failures: failures.load(ordering: .relaxed), dropped: dropped.load(ordering: .relaxed))
    }
}
