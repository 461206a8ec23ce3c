// A sink that keeps what it receives: for tests, benchmarks and embedding apps' own assertions.
import Synchronization

/// Collects records in memory, in the order received.
///
/// A test kit shipped beside the API (like swift-log's in-memory handler): attach it to a
/// ``RecordPipeline`` and assert on ``records``.
public final class InMemoryRecordSink: RecordSink {
    private let storage = Mutex<[SequencedRecord]>([])
    private let limit: Int

    /// Creates a sink that keeps at most `limit` records (the oldest go first).
    public init(limit: Int = .max) {
        self.limit = max(1, limit)
    }

    /// Appends the record, dropping the oldest past the limit.
    public func receive(_ record: SequencedRecord) {
        storage.withLock { records in
            if records.count >= limit { records.removeFirst(records.count - limit + 1) }
            records.append(record)
        }
    }

    /// Everything received so far.
    public var records: [SequencedRecord] { storage.withLock { $0 } }

    /// Forgets everything received so far.
    public func removeAll() { storage.withLock { $0.removeAll() } }
}
