// Over-budget and exit counts beside each name's histogram: exact for every path that closes a
// span, and read back from a crashed process's file.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SpanTallyTests {
    private struct Thrown: Error {}

    @Test func everyOverBudgetAndNonSuccessEndIsCountedExactly() throws {
        let harness = SpanHarness()
        let recorder = harness.recorder
        for index in 0..<30 {
            let token = recorder.begin("tally.scoped", budgetNanos: 10 * millisecond, site: CallSite())
            harness.clock.advance(byMilliseconds: index % 3 == 0 ? 11 : 5)
            recorder.end(token, exit: index % 5 == 0 ? .failure : .success)
        }
        for _ in 0..<4 {
            #expect(throws: Thrown.self) {
                try recorder.measure("tally.measure", budgetNanos: 10 * millisecond, site: CallSite()) {
                    harness.clock.advance(byMilliseconds: 1)
                    throw Thrown()
                }
            }
            #expect(throws: CancellationError.self) {
                try recorder.measure("tally.measure", budgetNanos: 10 * millisecond, site: CallSite()) {
                    throw CancellationError()
                }
            }
        }
        // Registered spans: one ended over budget, one superseded, one expired.
        let keyed = recorder.begin(key: "k", "tally.keyed", budgetNanos: 2 * millisecond, site: CallSite())
        harness.clock.advance(byMilliseconds: 3)
        recorder.end(keyed)
        _ = recorder.begin(key: "s", "tally.keyed", budgetNanos: nil, site: CallSite())
        _ = recorder.begin(key: "s", "tally.keyed", budgetNanos: nil, site: CallSite())
        _ = recorder.begin(
            "tally.bounded", budgetNanos: 1 * millisecond, lifetime: .bounded(budgetNanos: 5 * millisecond),
            site: CallSite())
        harness.advance(byMilliseconds: 6)

        let tallies = recorder.histograms.tallies()
        // Of 30 ends, 10 ran 11 ms against 10 (index 0, 3, …, 27) and 6 failed (0, 5, …, 25).
        #expect(tallies["tally.scoped"] == SpanTally(overBudget: 10, overBudgetNanos: 110 * millisecond, failure: 6))
        #expect(tallies["tally.measure"] == SpanTally(failure: 4, cancelled: 4))
        #expect(tallies["tally.keyed"] == SpanTally(overBudget: 1, overBudgetNanos: 3 * millisecond, superseded: 1))
        #expect(tallies["tally.bounded"]?.expired == 1)
        #expect(tallies["tally.bounded"]?.overBudget == 1)
        // Every over-budget end of a scoped span emitted exactly one record too.
        let overRecords = harness.records.compactMap(\.spanEnd).filter {
            $0.name == "tally.scoped" && $0.isOverBudgetOrAlwaysRecorded
        }
        #expect(overRecords.count == 10)
    }

    @Test func anUnderBudgetSuccessCountsNothing() {
        let harness = SpanHarness()
        for _ in 0..<100 {
            harness.recorder.end(harness.recorder.begin("tally.quiet", budgetNanos: 10 * millisecond, site: CallSite()))
        }
        #expect(harness.recorder.histograms.tallies()["tally.quiet"] == nil)
        #expect(harness.recorder.histograms.snapshot()["tally.quiet"]?.count == 100)
    }

    @Test func manyThreadsCountEveryOverBudgetEnd() async {
        let registry = HistogramRegistry()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<2_000 { registry.tally("tally.threads", overBudgetNanos: 7, exit: .failure) }
                }
            }
        }
        #expect(
            registry.tallies()["tally.threads"]
                == SpanTally(overBudget: 16_000, overBudgetNanos: 112_000, failure: 16_000))
    }

    @Test func talliesSurviveInTheFileAProcessLeftBehind() throws {
        let directory = try TemporaryDirectory("tally")
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("spans.map").path
        let memory = try SpanMemory.create(
            path: path, SpanMemory.Configuration(bytes: 1 << 20, nameCapacity: 64, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        for _ in 0..<5 { registry.record("tally.file", nanos: 20) }
        for _ in 0..<3 { registry.tally("tally.file", overBudgetNanos: 20, exit: .success) }
        registry.tally("tally.file", overBudgetNanos: nil, exit: .expired)
        let recovered = try #require(try RecoveredSpanMemory.read(path: path))
        #expect(recovered.tallies["tally.file"] == SpanTally(overBudget: 3, overBudgetNanos: 60, expired: 1))
        #expect(recovered.histograms["tally.file"]?.count == 5)
    }

    @Test func aTallyReferenceToAnythingButATallyBlockIsSkipped() throws {
        let memory = try SpanMemory.anonymous(
            SpanMemory.Configuration(bytes: 1 << 20, nameCapacity: 16, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        registry.record("tally.damaged", nanos: 5)
        registry.tally("tally.damaged", overBudgetNanos: 5, exit: .success)
        #expect(registry.tallies()["tally.damaged"]?.overBudget == 1)
        // Point the entry's tally reference at its stripe (another kind of block).
        let entry = memory.entry(0)
        let stripeRef = entry.load(fromByteOffset: 64, as: UInt32.self)
        entry.storeBytes(of: stripeRef, toByteOffset: 48, as: UInt32.self)
        #expect(registry.tallies()["tally.damaged"] == nil)
        #expect(registry.snapshot()["tally.damaged"]?.count == 1)
    }
}
