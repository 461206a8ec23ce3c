// What a record consumer implements, how it is attached, and what the pipeline counts for it.

/// Receives records from a ``RecordPipeline``: the JSONL ledger, exporters, tests.
///
/// A sink attached `.inline` runs on the emitting thread, inside the pipeline's ordering lock, so
/// its effect is complete when the emitter's call returns (the ledger needs its line on disk when
/// `end()` returns). A sink attached `.buffered` runs on its own delivery thread and never slows
/// an emitter.
///
/// - Warning: An inline sink may emit notes or scoped spans (they are queued and delivered after
///   the current record), but must not begin or end registered spans (those paths hold the span
///   registry lock while emitting), nor call `flush`, `addSink` or `statistics` (they take the
///   pipeline lock it is called under).
public protocol RecordSink: Sendable {
    /// Handles one record. A thrown error is counted in the sink's ``SinkStatistics/failures``;
    /// the sink keeps receiving the records that follow.
    func receive(_ record: SequencedRecord) throws
}

/// How a sink is attached to the pipeline.
public enum SinkMode: Sendable, Equatable {
    /// Called synchronously on the emitting thread, in sequence order.
    case inline
    /// Called on the sink's own thread from a bounded queue, in sequence order. When the queue is
    /// full, new records are dropped for this sink (and counted) rather than blocking the emitter.
    case buffered(capacity: Int)
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
    /// Records dropped because the sink's queue was full (buffered sinks only).
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
