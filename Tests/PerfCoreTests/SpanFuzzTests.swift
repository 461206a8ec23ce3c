// Seeded concurrency fuzz: 8 tasks interleave begins, ends, supersedes, expiry and new sinks;
// afterwards nothing is lost, duplicated or delivered out of order, and no span is left open.
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

/// Everything the fuzz tasks share.
private final class FuzzWorld: Sendable {
    let clock = ManualClock()
    let timer = ManualExpiryTimer()
    let pipeline = RecordPipeline()
    let inline = InMemoryRecordSink()
    let buffered = InMemoryRecordSink()
    let observer = RecordingObserver()
    let recorder: SpanRecorder
    let lateSinks = Mutex<[InMemoryRecordSink]>([])
    let begunIDs = Mutex<Set<UInt64>>([])
    static let keys = (0..<6).map { "key-\($0)" }

    init() {
        pipeline.addSink(inline, mode: .inline)
        pipeline.addSink(buffered, mode: .buffered(capacity: 1 << 20))
        recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: pipeline, clock: clock, expiryTimer: timer,
            observers: [observer])
    }

    func run(task: Int, seed: UInt64, operations: Int) async {
        var rng = SeededRandom(seed: seed &+ UInt64(task) &* 0x1000_0000_01)
        var held: [SpanToken] = []
        for step in 0..<operations {
            switch rng.next() % 100 {
            case 0..<25:
                let token = recorder.begin(
                    key: Self.keys.randomElement(using: &rng)!, "fuzz.keyed", budgetNanos: budget(&rng),
                    lifetime: lifetime(&rng), site: CallSite())
                begunIDs.withLock { _ = $0.insert(token.id) }
            case 25..<45:
                recorder.end(key: Self.keys.randomElement(using: &rng)!, detail: "step \(step)")
            case 45..<60:
                let token = recorder.begin(
                    "fuzz.registered", budgetNanos: budget(&rng), lifetime: lifetime(&rng), site: CallSite())
                begunIDs.withLock { _ = $0.insert(token.id) }
                held.append(token)
            case 60..<72 where !held.isEmpty:
                recorder.end(held.remove(at: Int(rng.next() % UInt64(held.count))), exit: .failure, reason: "Fuzz")
            case 72..<82:
                recorder.end(recorder.begin("fuzz.scoped", budgetNanos: budget(&rng), site: CallSite()))
            case 82..<96:
                clock.advance(byNanos: rng.next() % (8 * millisecond))
                timer.fireIfDue(nowNanos: clock.monotonicNanos())
            case 96..<98:
                let sink = InMemoryRecordSink()
                lateSinks.withLock { $0.append(sink) }
                pipeline.addSink(sink, mode: rng.next() % 2 == 0 ? .inline : .buffered(capacity: 1 << 20))
            default:
                pipeline.emit(.note(NoteRecord(name: "fuzz.note", wallNanos: clock.wallNanos())))
            }
            if step % 8 == 0 { await Task.yield() }
        }
        for token in held { recorder.end(token) }
    }

    private func budget(_ rng: inout SeededRandom) -> UInt64? {
        rng.next() % 4 == 0 ? nil : rng.next() % (20 * millisecond)
    }

    private func lifetime(_ rng: inout SeededRandom) -> SpanLifetime {
        rng.next() % 2 == 0 ? .indefinite : .bounded(budgetNanos: 1 + rng.next() % (40 * millisecond))
    }
}

@Suite struct SpanFuzzTests {
    @Test(arguments: [1, 7, 42, 2026, 0xDEAD_BEEF] as [UInt64])
    func concurrentSpansNeverLoseDuplicateOrReorder(seed: UInt64) async throws {
        let world = FuzzWorld()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { await world.run(task: task, seed: seed, operations: 400) }
            }
        }
        for key in FuzzWorld.keys { world.recorder.end(key: key) }
        #expect(world.recorder.openSpanCount == 0, "seed \(seed): open-span registry not empty")
        #expect(world.pipeline.flush(), "seed \(seed): flush timed out")

        let all = world.inline.records
        #expect(all.map(\.sequence) == Array(1...world.pipeline.emittedCount), "seed \(seed): loss or duplicate")
        #expect(world.buffered.records == all, "seed \(seed): buffered sink differs from inline sink")
        checkPairs(all, begun: world.begunIDs.withLock { $0 }, seed: seed)
        checkCoverage(all, seed: seed)
        checkObserver(world.observer.events, seed: seed)
        for late in world.lateSinks.withLock({ $0 }) {
            let received = late.records
            guard let first = received.first?.sequence else { continue }
            #expect(
                received == all.filter { $0.sequence >= first },
                "seed \(seed): a late sink missed or repeated records after it was added")
        }
    }

    /// Every begun span has exactly one begin and one end, the begin first, any overdue between.
    private func checkPairs(_ records: [SequencedRecord], begun: Set<UInt64>, seed: UInt64) {
        var beginAt: [UInt64: UInt64] = [:]
        var endAt: [UInt64: UInt64] = [:]
        var overdueAt: [UInt64: [UInt64]] = [:]
        for record in records {
            switch record.record {
            case .spanBegan(let begin):
                #expect(beginAt.updateValue(record.sequence, forKey: begin.id) == nil, "seed \(seed): two begins")
            case .spanEnded(let end) where end.id != 0:
                #expect(beginAt[end.id] != nil, "seed \(seed): end of \(end.id) before its begin")
                #expect(endAt.updateValue(record.sequence, forKey: end.id) == nil, "seed \(seed): two ends")
            case .overdue(let overdue):
                #expect(endAt[overdue.id] == nil, "seed \(seed): overdue of \(overdue.id) after its end")
                overdueAt[overdue.id, default: []].append(record.sequence)
            default:
                break
            }
        }
        #expect(Set(beginAt.keys) == begun, "seed \(seed): begin records lost")
        #expect(Set(endAt.keys) == begun, "seed \(seed): spans without an end")
        #expect(overdueAt.values.allSatisfy { $0.count == 1 }, "seed \(seed): overdue reported twice")
    }

    /// The run exercised every race it claims to: supersedes, expiries, overdues, unmatched ends.
    private func checkCoverage(_ records: [SequencedRecord], seed: UInt64) {
        var exits = Set<SpanExit>()
        var overdue = 0
        var unmatched = 0
        for record in records {
            switch record.record {
            case .spanEnded(let end): exits.insert(end.exit)
            case .overdue: overdue += 1
            case .unmatchedEnd: unmatched += 1
            default: break
            }
        }
        #expect(exits.isSuperset(of: [.success, .failure, .superseded, .expired]), "seed \(seed): exits \(exits)")
        #expect(overdue > 0 && unmatched > 0, "seed \(seed): \(overdue) overdue, \(unmatched) unmatched")
    }

    private func checkObserver(_ events: [RecordingObserver.Event], seed: UInt64) {
        var open = Set<UInt64>()
        var closed = Set<UInt64>()
        for event in events {
            switch event {
            case .began(let id, _):
                #expect(open.insert(id).inserted, "seed \(seed): observer saw \(id) begin twice")
            case .closed(let id, _):
                #expect(open.remove(id) != nil, "seed \(seed): observer saw \(id) close before begin")
                #expect(closed.insert(id).inserted, "seed \(seed): observer saw \(id) close twice")
            }
        }
        #expect(open.isEmpty, "seed \(seed): observer still has open spans")
    }
}
