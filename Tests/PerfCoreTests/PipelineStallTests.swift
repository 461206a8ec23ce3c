// No pipeline or registry lock is held across a sink or observer. A thread stalled in an
// inline sink (a ledger write on a stalled disk) or in a journal observer stalls only itself; the
// records other threads emit meanwhile wait in the sink's bounded backlog, in sequence order.
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@Suite struct PipelineStallTests {
    @Test func stalledInlineSinkBlocksOnlyTheThreadInsideIt() {
        let pipeline = RecordPipeline()
        let sink = StallingSink { $0.noteName == "stall" }
        let fast = InMemoryRecordSink()
        pipeline.addSink(sink, mode: .inline)
        pipeline.addSink(fast, mode: .inline)
        let stuck = TestThread("stuck") { pipeline.emit(.testNote("stall")) }
        #expect(pollUntil(seconds: 10) { sink.stalled.load(ordering: .relaxed) == 1 })
        let other = TestThread("other") {
            for index in 1...100 { pipeline.emit(.testNote("n\(index)")) }
        }
        #expect(pollUntil(seconds: 10) { other.isDone }, "an emitter waited for another thread's stalled sink")
        #expect(!stuck.isDone)
        // Queued behind record 1, which the stuck thread still owns for both sinks.
        #expect(sink.records.isEmpty)
        sink.open()
        #expect(pipeline.flush())
        #expect(pollUntil(seconds: 10) { stuck.isDone })
        #expect(sink.records.map(\.sequence) == Array(1...101))
        #expect(fast.records.map(\.sequence) == Array(1...101))
        #expect(pipeline.statistics.map(\.dropped) == [0, 0])
    }

    @Test(arguments: [100, 4_000])
    func fullBacklogDropsNewRecordsCountsThemAndTellsTheSink(capacity: Int) {
        let pipeline = RecordPipeline()
        let sink = StallingSink { $0.noteName == "stall" }
        // Names of one length, so every record has the same estimate and the bound is `capacity` records.
        func name(_ index: Int) -> String {
            "n" + String(repeating: "0", count: 6 - String(index).count) + String(index)
        }
        let bytes = Record.testNote(name(0)).estimatedBytes
        pipeline.addSink(sink, mode: .inline, backlogBytes: capacity * bytes)
        let stuck = TestThread("stuck") { pipeline.emit(.testNote("stall")) }
        #expect(pollUntil(seconds: 10) { sink.stalled.load(ordering: .relaxed) == 1 })
        for index in 0..<(capacity + 5) { pipeline.emit(.testNote(name(index))) }
        #expect(pipeline.statistics.first?.dropped == 5)
        #expect(sink.drops.isEmpty, "the sink is told by the lane's owner, once it is out of the stalled record")
        sink.open()
        #expect(pipeline.flush())
        #expect(pollUntil(seconds: 10) { stuck.isDone })
        let sequences = sink.records.map(\.sequence)
        #expect(sequences == Array(1...UInt64(capacity + 1)), "the newest records are the ones dropped")
        #expect(pipeline.statistics.first?.delivered == UInt64(capacity + 1))
        let drops = sink.drops
        #expect(drops.count == 1)
        #expect(drops.first?.count == 5 && drops.first?.cause == .backlog)
        #expect(drops.first?.afterRecords == 1, "told right after the record it was stuck in, before the backlog")
    }

    @Test func theBacklogIsBoundedInBytesNotRecords() {
        let pipeline = RecordPipeline()
        let sink = StallingSink { $0.noteName == "stall" }
        let small = Record.testNote("s")
        let large = Record.testNote(String(repeating: "L", count: 1_000))
        pipeline.addSink(sink, mode: .inline, backlogBytes: 10 * small.estimatedBytes)
        let stuck = TestThread("stuck") { pipeline.emit(.testNote("stall")) }
        #expect(pollUntil(seconds: 10) { sink.stalled.load(ordering: .relaxed) == 1 })
        // Large records fill the bound in fewer records than small ones.
        var kept = 0
        for _ in 0..<10 {
            pipeline.emit(large)
            if pipeline.statistics.first?.dropped == 0 { kept += 1 }
        }
        #expect(kept == 10 * small.estimatedBytes / large.estimatedBytes)
        #expect(pipeline.statistics.first?.dropped == UInt64(10 - kept))
        sink.open()
        #expect(pipeline.flush())
        #expect(pollUntil(seconds: 10) { stuck.isDone })
        #expect(sink.records.count == 1 + kept)
        #expect(sink.drops.map(\.count) == [UInt64(10 - kept)])
    }

    @Test func recordsASinkDoesNotAcceptTakeNoBacklogSlot() {
        let pipeline = RecordPipeline()
        let sink = NotesOnlySink { $0.noteName == "stall" }
        pipeline.addSink(sink, mode: .inline)
        let stuck = TestThread("stuck") { pipeline.emit(.testNote("stall")) }
        #expect(pollUntil(seconds: 10) { sink.stalledCount == 1 })
        let span = SpanEndRecord(
            id: 0, name: "ignored", site: "s", startWallNanos: 0, durationNanos: 1, budgetNanos: 10, exit: .success)
        for _ in 0..<5_000 { pipeline.emit(.spanEnded(span)) }
        pipeline.emit(.testNote("kept"))
        #expect(pipeline.statistics.first?.dropped == 0)
        sink.open()
        #expect(pipeline.flush())
        #expect(pollUntil(seconds: 10) { stuck.isDone })
        #expect(sink.records.compactMap(\.record.noteName) == ["stall", "kept"])
    }

    @Test func flushWaitsForAnInlineBacklog() {
        let pipeline = RecordPipeline()
        let sink = StallingSink { $0.noteName == "stall" }
        pipeline.addSink(sink, mode: .inline)
        _ = TestThread("stuck") { pipeline.emit(.testNote("stall")) }
        #expect(pollUntil(seconds: 10) { sink.stalled.load(ordering: .relaxed) == 1 })
        pipeline.emit(.testNote("queued"))
        #expect(!pipeline.flush(timeoutNanos: 20 * millisecond))
        sink.open()
        #expect(pipeline.flush())
        #expect(sink.records.compactMap(\.record.noteName) == ["stall", "queued"])
    }

    @Test func keyedSpansOnOtherThreadsPassAStalledSinkAndAStalledObserver() {
        let clock = ManualClock()
        let pipeline = RecordPipeline()
        let sink = StallingSink { $0.spanEnd?.name == "stall.sink" }
        pipeline.addSink(sink, mode: .inline)
        let observer = StallingObserver(stallsOnSpanNamed: "stall.observer")
        let recording = RecordingObserver()
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: pipeline, clock: clock, expiryTimer: ManualExpiryTimer(),
            observers: [observer, recording])
        let inSink = TestThread("in-sink") {
            recorder.begin(key: "a", "stall.sink", budgetNanos: 0, site: CallSite())
            recorder.end(key: "a")
        }
        let inObserver = TestThread("in-observer") {
            recorder.begin(key: "b", "stall.observer", budgetNanos: nil, site: CallSite())
        }
        #expect(pollUntil(seconds: 10) { sink.stalled.load(ordering: .relaxed) == 1 })
        #expect(pollUntil(seconds: 10) { observer.stalled.load(ordering: .relaxed) == 1 })
        let other = TestThread("other") {
            for index in 0..<50 {
                recorder.begin(key: "k\(index % 3)", "other.keyed", budgetNanos: 1_000 * millisecond, site: CallSite())
                recorder.end(key: "k\(index % 3)")
                recorder.end(
                    recorder.begin(
                        "other.bounded", budgetNanos: nil, lifetime: .bounded(budgetNanos: 1), site: CallSite()))
                pipeline.emit(.testNote("other.note"))
            }
        }
        #expect(
            pollUntil(seconds: 10) { other.isDone }, "keyed spans waited for another thread's stalled sink or journal")
        #expect(!inSink.isDone && !inObserver.isDone)
        sink.open()
        observer.open()
        #expect(pollUntil(seconds: 10) { inSink.isDone && inObserver.isDone })
        recorder.end(key: "b")
        #expect(pipeline.flush())
        let records = sink.records
        #expect(records.map(\.sequence) == Array(1...pipeline.emittedCount))
        // 2 begins and ends of a and b, 100 begins and ends per kind of other span, 50 notes.
        #expect(records.count == 4 + 200 + 50)
        #expect(recorder.openSpanCount == 0)
    }
}

/// A stalling sink that accepts notes only.
private final class NotesOnlySink: RecordSink {
    let inner: StallingSink
    init(stallsOn stalls: @escaping @Sendable (Record) -> Bool) { inner = StallingSink(stallsOn: stalls) }
    func accepts(_ record: Record) -> Bool { record.noteName != nil }
    func receive(_ record: SequencedRecord) { inner.receive(record) }
    func open() { inner.open() }
    var stalledCount: Int { inner.stalled.load(ordering: .relaxed) }
    var records: [SequencedRecord] { inner.records }
}
