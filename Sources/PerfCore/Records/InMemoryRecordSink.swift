// A sink that keeps what it receives: for tests, benchmarks and embedding apps' own assertions.
import Synchronization

/// Collects records in memory, in the order received.
///
/// A test kit shipped beside the API (like swift-log's in-memory handler): attach it to a
/// ``RecordPipeline`` and assert on ``records``. With a limit it is a ring: the oldest records
/// are overwritten, so a long benchmark keeps constant memory and constant cost per record.
public final class InMemoryRecordSink: RecordSink {
    private struct Ring {
        var slots: [SequencedRecord] = []
        /// Where the oldest record is once the ring is full.
        var oldest = 0
    }

    private let storage = Mutex(Ring())
    private let limit: Int

    /// Creates a sink that keeps at most `limit` records (the oldest go first).
    public init(limit: Int = .max) {
        self.limit = max(1, limit)
    }

    /// Appends the record, overwriting the oldest past the limit.
    public func receive(_ record: SequencedRecord) {
        storage.withLock { ring in
            if ring.slots.count < limit {
                ring.slots.append(record)
            } else {
                ring.slots[ring.oldest] = record
                ring.oldest = (ring.oldest + 1) % limit
            }
        }
    }

    /// Everything kept so far, oldest first.
    public var records: [SequencedRecord] {
        storage.withLock { ring in Array(ring.slots[ring.oldest...] + ring.slots[..<ring.oldest]) }
    }

    /// Forgets everything received so far.
    public func removeAll() { storage.withLock { $0 = Ring() } }
}
