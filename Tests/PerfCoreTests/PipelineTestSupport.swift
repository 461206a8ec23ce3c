// Sinks and observers the span and pipeline tests share.
import Foundation
import PerfCore
import Synchronization

/// A sink that blocks in `receive` on every record until the test opens its gate.
typealias GatedSink = StallingSink

/// Fails every other record.
final class FlakySink: RecordSink {
    struct Failure: Error {}
    private let calls = Atomic<Int>(0)

    func receive(_ record: SequencedRecord) throws {
        if calls.add(1, ordering: .relaxed).newValue % 2 == 0 { throw Failure() }
    }
}

/// Remembers observer calls in order.
final class RecordingObserver: LongLivedSpanObserver {
    enum Event: Equatable {
        case began(UInt64, String?)
        case closed(UInt64, SpanExit)
    }

    private let storage = Mutex<[Event]>([])

    func spanBegan(_ span: OpenSpanInfo) { storage.withLock { $0.append(.began(span.id, span.key)) } }

    func spanClosed(id: UInt64, exit: SpanExit) { storage.withLock { $0.append(.closed(id, exit)) } }

    var events: [Event] { storage.withLock { $0 } }
}

/// A recorder on a manual clock and timer, with an inline in-memory sink.
struct SpanHarness {
    let clock = ManualClock()
    let timer = ManualExpiryTimer()
    let sink = InMemoryRecordSink()
    let observer = RecordingObserver()
    let pipeline = RecordPipeline()
    let recorder: SpanRecorder

    init() {
        pipeline.addSink(sink, mode: .inline)
        recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: pipeline, clock: clock, expiryTimer: timer,
            observers: [observer])
    }

    var records: [Record] { sink.records.map(\.record) }

    /// Advances the clock and fires the timer if its deadline has come.
    @discardableResult
    func advance(byMilliseconds ms: UInt64) -> Bool {
        clock.advance(byMilliseconds: ms)
        return timer.fireIfDue(nowNanos: clock.monotonicNanos())
    }
}

extension Record {
    var spanEnd: SpanEndRecord? {
        if case .spanEnded(let end) = self { return end }
        return nil
    }

    var spanBegin: SpanBeginRecord? {
        if case .spanBegan(let begin) = self { return begin }
        return nil
    }

    var overdueRecord: OverdueRecord? {
        if case .overdue(let overdue) = self { return overdue }
        return nil
    }
}

let millisecond: UInt64 = 1_000_000
