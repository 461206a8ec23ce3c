// Seeded concurrency fuzz of the pipeline's lanes: threads emit at once into inline sinks that
// yield or re-emit at random points, and a buffered one; afterwards every sink has every record
// once, in sequence order, whichever thread delivered it.
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

/// An inline sink whose `receive` yields the processor at seeded points (a record's sequence
/// picks them), so deliveries of different threads overlap, and re-emits an echo of some notes.
private final class JitterSink: RecordSink {
    let seed: UInt64
    let echoes: Bool
    unowned let pipeline: RecordPipeline
    let received = Mutex<[SequencedRecord]>([])

    init(seed: UInt64, echoes: Bool, pipeline: RecordPipeline) {
        self.seed = seed
        self.echoes = echoes
        self.pipeline = pipeline
    }

    func receive(_ record: SequencedRecord) {
        var rng = SeededRandom(seed: seed ^ record.sequence)
        for _ in 0..<(rng.next() % 4) { sched_yield() }
        received.withLock { $0.append(record) }
        if echoes, let name = record.record.noteName, !name.hasPrefix("echo"), rng.next() % 8 == 0 {
            pipeline.emit(.testNote("echo-\(name)"))
        }
    }

    var records: [SequencedRecord] { received.withLock { $0 } }
}

@Suite struct PipelineFuzzTests {
    @Test(arguments: [3, 17, 2026, 0xFEED_F00D] as [UInt64])
    func concurrentEmittersKeepEverySinksOrderWithoutLossOrDuplicates(seed: UInt64) {
        let pipeline = RecordPipeline()
        let echo = JitterSink(seed: seed, echoes: true, pipeline: pipeline)
        let jitter = JitterSink(seed: seed &* 31, echoes: false, pipeline: pipeline)
        let plain = InMemoryRecordSink()
        let buffered = InMemoryRecordSink()
        pipeline.addSink(echo, mode: .inline)
        pipeline.addSink(jitter, mode: .inline)
        pipeline.addSink(plain, mode: .inline)
        pipeline.addSink(buffered, mode: .buffered(capacity: 1 << 16))
        let threads = 4
        let perThread = 400
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            let worker = Thread {
                var rng = SeededRandom(seed: seed &+ UInt64(thread))
                for index in 0..<perThread {
                    pipeline.emit(.testNote("t\(thread)-\(index)"))
                    if rng.next() % 16 == 0 { sched_yield() }
                }
                group.leave()
            }
            worker.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "seed \(seed): an emitter never returned")
        // An echo emitted by a delivery that flush waited for is numbered after flush's mark:
        // flush again until nothing new was emitted.
        var emitted: UInt64 = 0
        repeat {
            emitted = pipeline.emittedCount
            #expect(pipeline.flush(), "seed \(seed): flush timed out")
        } while pipeline.emittedCount != emitted
        let all = Array(1...emitted)
        #expect(pipeline.emittedCount >= UInt64(threads * perThread))
        for (name, records) in [
            ("echo", echo.records), ("jitter", jitter.records), ("plain", plain.records),
            ("buffered", buffered.records),
        ] {
            let sequences = records.map(\.sequence)
            let firstWrong = Array(zip(sequences, all)).firstIndex { $0 != $1 }
            #expect(
                sequences.count == all.count && firstWrong == nil,
                "seed \(seed): \(name) sink has \(sequences.count) of \(all.count) records, first out of place at \(firstWrong.map(String.init) ?? "-")"
            )
        }
        #expect(plain.records == buffered.records, "seed \(seed): sinks saw different records")
        #expect(
            echo.records == plain.records && jitter.records == plain.records,
            "seed \(seed): sinks saw different records")
        // Each thread's own records reach every sink in the order that thread emitted them.
        for thread in 0..<threads {
            let mine = plain.records.compactMap(\.record.noteName).filter { $0.hasPrefix("t\(thread)-") }
            #expect(mine == (0..<perThread).map { "t\(thread)-\($0)" }, "seed \(seed): thread \(thread)'s records")
        }
        #expect(pipeline.statistics.allSatisfy { $0.dropped == 0 && $0.failures == 0 }, "seed \(seed)")
    }
}
