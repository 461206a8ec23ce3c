// The record pipeline: order, transform and stripping, slow and failing sinks, flush.
import Foundation
import PerfCore
import Synchronization
import Testing

private func note(_ index: Int) -> Record {
    .note(NoteRecord(name: "n\(index)", wallNanos: UInt64(index)))
}

private func noteNames(_ records: [SequencedRecord]) -> [String] {
    records.compactMap { record in
        if case .note(let note) = record.record { return note.name }
        return nil
    }
}

@Suite struct PipelineTests {
    @Test func everySinkSeesSequenceOrder() {
        let pipeline = RecordPipeline()
        let inline = InMemoryRecordSink()
        let buffered = InMemoryRecordSink()
        pipeline.addSink(inline, mode: .inline)
        pipeline.addSink(buffered, mode: .buffered(capacity: 1_000))
        for index in 0..<500 { pipeline.emit(note(index)) }
        #expect(pipeline.flush())
        #expect(inline.records.map(\.sequence) == Array(1...500))
        #expect(buffered.records.map(\.sequence) == Array(1...500))
        #expect(noteNames(buffered.records) == (0..<500).map { "n\($0)" })
        #expect(pipeline.emittedCount == 500)
        #expect(pipeline.statistics.map(\.delivered) == [500, 500])
    }

    @Test func transformRewritesAndDrops() {
        let pipeline = RecordPipeline()
        let sink = InMemoryRecordSink()
        pipeline.addSink(sink, mode: .inline)
        pipeline.setTransform { record in
            guard case .note(var note) = record else { return record }
            if note.name == "secret" { return nil }
            note.detail = "enriched"
            return .note(note)
        }
        pipeline.emit(.note(NoteRecord(name: "secret", wallNanos: 1)))
        pipeline.emit(.note(NoteRecord(name: "public", wallNanos: 2)))
        #expect(sink.records.count == 1)
        #expect(sink.records.first?.record == .note(NoteRecord(name: "public", detail: "enriched", wallNanos: 2)))
        #expect(sink.records.first?.sequence == 1, "a dropped record takes no sequence number")
    }

    @Test func droppingHalfAPairDeliversAStrippedCopy() throws {
        let harness = SpanHarness()
        harness.pipeline.setTransform { record in
            if case .spanEnded = record { return nil }
            return record
        }
        let token = harness.recorder.begin(key: "k", "paired", budgetNanos: nil, site: CallSite())
        harness.recorder.end(token, exit: .failure, reason: "Oops", detail: "/private/path", count: 3)
        harness.recorder.end(harness.recorder.begin("scoped", budgetNanos: nil, site: CallSite()))
        #expect(harness.records.count == 2, "the scoped span is unpaired, so dropping it is allowed")
        let end = try #require(harness.records.last?.spanEnd)
        #expect(end.id == token.id)
        #expect(end.exit == .failure)
        #expect(end.reason == nil)
        #expect(end.detail == nil)
        #expect(end.count == nil)
    }

    @Test func slowSinkNeverBlocksTheEmitterAndOverflowIsCounted() {
        let pipeline = RecordPipeline()
        let gated = GatedSink()
        let fast = InMemoryRecordSink()
        pipeline.addSink(gated, mode: .buffered(capacity: 10))
        pipeline.addSink(fast, mode: .inline)
        // The gated sink is stuck on its first record; the emitter must still get through all 100.
        for index in 0..<100 { pipeline.emit(note(index)) }
        #expect(fast.records.count == 100)
        gated.open()
        #expect(pipeline.flush())
        let stats = pipeline.statistics[0]
        #expect(stats.delivered == UInt64(gated.records.count))
        #expect(stats.dropped == 100 - stats.delivered)
        #expect(stats.dropped >= 89, "capacity 10 plus the one in hand")
        let sequences = gated.records.map(\.sequence)
        #expect(sequences == sequences.sorted(), "order survives overflow")
        #expect(sequences.first == 1)
    }

    @Test func failingSinkIsCountedAndKeepsReceiving() {
        let pipeline = RecordPipeline()
        let inline = FlakySink()
        let buffered = FlakySink()
        pipeline.addSink(inline, mode: .inline)
        pipeline.addSink(buffered, mode: .buffered(capacity: 100))
        for index in 0..<10 { pipeline.emit(note(index)) }
        #expect(pipeline.flush())
        for stats in pipeline.statistics {
            #expect(stats.failures == 5)
            #expect(stats.delivered == 5)
            #expect(stats.dropped == 0)
        }
        #expect(pipeline.statistics.map(\.mode) == [.inline, .buffered(capacity: 100)])
        #expect(pipeline.statistics.first?.sinkType == "FlakySink")
    }

    @Test func inlineSinkMayEmitWithoutDeadlock() {
        let pipeline = RecordPipeline()
        let sink = InMemoryRecordSink()
        pipeline.addSink(EchoSink(pipeline: pipeline), mode: .inline)
        pipeline.addSink(sink, mode: .inline)
        pipeline.emit(note(1))
        #expect(noteNames(sink.records) == ["n1", "echo"])
        #expect(sink.records.map(\.sequence) == [1, 2])
    }

    @Test func sinkAddedLaterSeesOnlyLaterRecords() {
        let pipeline = RecordPipeline()
        pipeline.emit(note(0))
        let sink = InMemoryRecordSink()
        pipeline.addSink(sink, mode: .buffered(capacity: 8))
        pipeline.emit(note(1))
        #expect(pipeline.flush())
        #expect(sink.records.map(\.sequence) == [2])
    }

    @Test func flushTimesOutOnAStuckSink() {
        let pipeline = RecordPipeline()
        let gated = GatedSink()
        pipeline.addSink(gated, mode: .buffered(capacity: 4))
        pipeline.emit(note(0))
        #expect(!pipeline.flush(timeoutNanos: 20 * millisecond))
        gated.open()
        #expect(pipeline.flush())
        #expect(gated.records.count == 1)
    }
}

/// Emits a note the first time it sees one: an inline sink re-entering the pipeline. Unowned:
/// the pipeline holds its sinks, and a strong reference back made a cycle LeakSanitizer reported.
private final class EchoSink: RecordSink {
    unowned let pipeline: RecordPipeline
    private let echoed = Atomic<Bool>(false)

    init(pipeline: RecordPipeline) { self.pipeline = pipeline }

    func receive(_ record: SequencedRecord) {
        if !echoed.exchange(true, ordering: .relaxed) {
            pipeline.emit(.note(NoteRecord(name: "echo", wallNanos: 0)))
        }
    }
}

@Suite struct InMemoryRecordSinkTests {
    @Test func limitKeepsTheNewestInOrder() {
        let sink = InMemoryRecordSink(limit: 3)
        for sequence in 1...7 as ClosedRange<UInt64> {
            sink.receive(SequencedRecord(sequence: sequence, record: note(Int(sequence))))
        }
        #expect(sink.records.map(\.sequence) == [5, 6, 7])
        sink.removeAll()
        #expect(sink.records.isEmpty)
    }
}
