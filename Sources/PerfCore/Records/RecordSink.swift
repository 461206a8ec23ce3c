// What a record consumer implements, how it is attached, and what the pipeline counts for it.
import Foundation

/// Receives records from a ``RecordPipeline``: the JSONL ledger, exporters, tests.
///
/// A sink attached `.inline` runs on the emitting thread, with no pipeline lock held, when no other
/// thread is inside it: its effect is then complete when the emitter's call returns (the ledger has
/// its line on disk when `end()` returns). While another thread is inside it, the record waits in
/// the sink's bounded backlog (dropped and counted when full) and is delivered after, in sequence
/// order, so one thread's stalled write never stalls another thread. A sink attached `.buffered`
/// runs on its own delivery thread and never slows an emitter.
///
/// - Warning: An inline sink may emit records (they are numbered at once and delivered after the
///   current one), but must not call `flush` (it would wait for itself).
public protocol RecordSink: Sendable {
    /// Handles one record. A thrown error is counted in the sink's ``SinkStatistics/failures``;
    /// the sink keeps receiving the records that follow.
    func receive(_ record: SequencedRecord) throws

    /// Whether `receive` would do anything with `record`; false keeps the record out of an inline
    /// sink's backlog, so records the sink ignores never crowd out the ones it writes while it
    /// is busy. Called under the pipeline's ordering lock: it must be cheap and must not emit.
    /// The default accepts every record.
    func accepts(_ record: Record) -> Bool

    /// Handles records in order, as one batch where the sink can (the ledger writes them with one
    /// `write(2)`); returns how many failed. Called by an inline sink's drain with the backlog's
    /// records. The default calls ``receive(_:)`` for each.
    func receive(batch: [SequencedRecord]) -> Int

    /// Told, in order among the records, that `count` records meant for this sink were dropped
    /// before it saw them (an inline sink's backlog was full while it was busy), so the sink can
    /// say so where its readers look. The default ignores it.
    func receiveDropped(_ count: UInt64, cause: DropCause)

    /// Waits until what ``receive(_:)`` accepted has taken its effect (a `.concurrent` sink's own
    /// queue is written); false if `deadline` passed first. The pipeline's `flush` calls it for
    /// `.concurrent` sinks. The default returns true at once.
    func waitUntilDone(deadline: Date) -> Bool

    /// ``receive(_:)`` for a `.concurrent` sink called under another lock (a registered span's
    /// record, numbered under the span registry's lock): the same effect, minus anything that may
    /// wait, which the sink leaves to its own thread (the ledger queues the line and lets its
    /// drain write it). The default calls ``receive(_:)``.
    func receiveWithoutBlocking(_ record: SequencedRecord) throws
}

extension RecordSink {
    public func accepts(_ record: Record) -> Bool { true }

    public func receive(batch: [SequencedRecord]) -> Int {
        var failed = 0
        for record in batch {
            do { try receive(record) } catch { failed += 1 }
        }
        return failed
    }

    public func receiveDropped(_ count: UInt64, cause: DropCause) {}

    public func waitUntilDone(deadline: Date) -> Bool { true }

    public func receiveWithoutBlocking(_ record: SequencedRecord) throws { try receive(record) }
}

/// Why records meant for a sink were lost.
public enum DropCause: String, Sendable, CaseIterable {
    /// An inline sink's backlog (bounded in bytes) was full while another thread was inside it.
    case backlog
    /// A buffered sink's queue was full.
    case queue
}

/// How a sink is attached to the pipeline.
public enum SinkMode: Sendable, Equatable {
    /// Called on the emitting thread when the sink is free, else from its backlog (bounded in
    /// bytes, ``RecordPipeline/addSink(_:mode:backlogBytes:)``), in batches; in sequence order.
    case inline
    /// Called on the sink's own thread from a bounded queue, in sequence order. When the queue is
    /// full, new records are dropped for this sink (and counted) rather than blocking the emitter.
    case buffered(capacity: Int)
    /// Called on the emitting thread with no pipeline lock held, by any number of threads at once:
    /// the sink keeps its own order and bounds (the ledger's crash-durable queue, the live
    /// metrics). A pipeline whose sinks are all `.concurrent` numbers records with one atomic add
    /// and takes no lock. Records a registered span emits are handed over under the span
    /// registry's lock, so one key's records keep their order.
    case concurrent
}

/// What happened to the records offered to one sink.
public struct SinkStatistics: Sendable, Equatable {
    /// The sink's type name, for diagnostics.
    public let sinkType: String
    /// How it is attached.
    public let mode: SinkMode
    /// Records handed to `receive` that returned normally.
    public let delivered: UInt64
    /// Records whose `receive` threw.
    public let failures: UInt64
    /// Records dropped because the sink's queue (buffered) or backlog (inline) was full.
    public let dropped: UInt64

    /// Creates a statistics snapshot.
    public init(sinkType: String, mode: SinkMode, delivered: UInt64, failures: UInt64, dropped: UInt64) {
        self.sinkType = sinkType
        self.mode = mode
        self.delivered = delivered
        self.failures = failures
        self.dropped = dropped
    }
}
