// While one thread's ledger writes stall (50 ms each, through the ledger's syscall seam),
// another thread's keyed begin/end, notes and under-budget spans take as long as without the stall.
// Both runs are measured in the same test; p99.9 is compared.
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

// The stall is injected through the ledger's syscall seam, which exists in debug builds only
// (the release test run builds this file without it).
#if DEBUG
    extension PerfGlobalStateTests {
        @Suite struct LedgerStallTests {
            /// Per-operation latencies of the measuring thread, in nanoseconds.
            struct Run {
                var keyed: [UInt64] = []
                var note: [UInt64] = []
                var underBudget: [UInt64] = []
                var stalledWrites = 0
                var ledgerDropped: UInt64 = 0

                static func p999(_ samples: [UInt64]) -> UInt64 {
                    let sorted = samples.sorted()
                    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.999).rounded(.up)) - 1)]
                }
            }

            static let stallNanos: UInt64 = 50_000_000
            static let iterations = 5_000

            @Test func anotherThreadsStalledLedgerWritesLeaveKeyedSpansNotesAndUnderBudgetSpansAlone() throws {
                let quiet = try measure(stallNanos: 0)
                let stalled = try measure(stallNanos: Self.stallNanos)
                #expect(stalled.stalledWrites > 0, "the ledger's writes never stalled: the test measured nothing")
                for (operation, quietSamples, stalledSamples) in [
                    ("keyed begin+end", quiet.keyed, stalled.keyed), ("note", quiet.note, stalled.note),
                    ("under-budget begin+end", quiet.underBudget, stalled.underBudget),
                ] {
                    let quietP999 = Run.p999(quietSamples)
                    let stalledP999 = Run.p999(stalledSamples)
                    print(
                        "LedgerStallTests: \(operation) p99.9 \(Double(stalledP999) / 1e3) µs with the other thread's "
                            + "writes stalled, \(Double(quietP999) / 1e3) µs without")
                    // Within 2× of the quiet run, with a 5 ms floor for a shared machine's scheduling noise;
                    // far below the 50 ms a write stalls, which any wait behind it would cost.
                    #expect(
                        stalledP999 <= max(2 * quietP999, 5_000_000),
                        "\(operation): p99.9 \(stalledP999) ns stalled vs \(quietP999) ns quiet")
                }
                print(
                    "LedgerStallTests: \(stalled.stalledWrites) stalled writes, \(stalled.ledgerDropped) ledger records dropped"
                )
            }

            /// Installs Perf with the ledger's writes stalled `stallNanos` each, has a second thread end
            /// over-budget spans (each writes a ledger line), and times this thread's operations.
            private func measure(stallNanos: UInt64) throws -> Run {
                let faults = SyscallFaultInjector()
                PerfState.ledgerFaults.withLock { $0 = faults }
                defer { PerfState.ledgerFaults.withLock { $0 = nil } }
                let directory = try TemporaryDirectory("ledger-stall")
                defer { directory.remove() }
                let configuration = Perf.Configuration(
                    directory: directory.url, app: Perf.AppInfo(name: "ledger-stall", version: "1", build: "1"),
                    recording: .enabled, noteFloorSeconds: 0)
                #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
                defer { Perf.shutdown() }
                faults.stallWrites(nanos: stallNanos)

                let writer = SlowSpanWriter()
                // The writer has a line in the ledger (or, stalled, is stuck writing one) before timing starts.
                #expect(
                    pollUntil(seconds: 10) {
                        stallNanos > 0
                            ? faults.stalledWrites.load(ordering: .relaxed) > 0
                            : writer.ended.load(ordering: .relaxed) > 3
                    })
                var run = Run()
                run.keyed.reserveCapacity(Self.iterations)
                run.note.reserveCapacity(Self.iterations)
                run.underBudget.reserveCapacity(Self.iterations)
                for _ in 0..<Self.iterations {
                    let start = perf_now()
                    Perf.begin(key: "stall-key", "stall.keyed", slowMs: 60_000)
                    Perf.end(key: "stall-key")
                    let keyed = perf_now()
                    Perf.note("stall.note")
                    let noted = perf_now()
                    Perf.begin("stall.fast", slowMs: 60_000).end()
                    let ended = perf_now()
                    run.keyed.append(keyed - start)
                    run.note.append(noted - keyed)
                    run.underBudget.append(ended - noted)
                }
                writer.stop()
                // Lift the stall so the backlog drains at disk speed and shutdown's flush is quick.
                faults.stallWrites(nanos: 0)
                #expect(pollUntil(seconds: 10) { writer.isDone })
                run.stalledWrites = faults.stalledWrites.load(ordering: .relaxed)
                run.ledgerDropped = PerfState.runtime()?.ledgerQueue?.droppedLines.load(ordering: .relaxed) ?? 0
                return run
            }
        }
    }

    private func perf_now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A thread that ends over-budget spans until stopped: each one writes a ledger line.
    private final class SlowSpanWriter: Sendable {
        let ended = Atomic<Int>(0)
        private let stopping = Atomic<Bool>(false)
        private let done = Atomic<Bool>(false)

        init() {
            let thread = Thread { [self] in
                while !stopping.load(ordering: .acquiring) {
                    Perf.begin("stall.slow", slowMs: 0).end()
                    ended.add(1, ordering: .relaxed)
                    // Pacing, not synchronisation: about a line a millisecond, so the writer's loop does
                    // not take a core from the measured thread once its lines queue instead of stalling.
                    usleep(1_000)
                }
                done.store(true, ordering: .releasing)
            }
            thread.name = "stall.writer"
            thread.start()
        }

        func stop() { stopping.store(true, ordering: .releasing) }
        var isDone: Bool { done.load(ordering: .acquiring) }
    }

#endif

/// The ledger sink turns away exactly the records it would write no line for.
@Suite struct LedgerSinkAcceptsTests {
    @Test func acceptsExactlyTheRecordsThatMakeALine() {
        func end(_ duration: UInt64, budget: UInt64?, exit: SpanExit) -> Record {
            .spanEnded(
                SpanEndRecord(
                    id: 1, name: "s", site: "f:1", startWallNanos: 0, durationNanos: duration, budgetNanos: budget,
                    exit: exit))
        }
        let records: [Record] = [
            end(1, budget: 10, exit: .success), end(20, budget: 10, exit: .success),
            end(1, budget: nil, exit: .success),
            end(1, budget: 10, exit: .expired), end(1, budget: 10, exit: .orphaned), end(1, budget: 10, exit: .failure),
            .spanBegan(
                SpanBeginRecord(
                    id: 1, name: "s", key: "k", site: "f:1", startWallNanos: 0, budgetNanos: 10, lifetime: .indefinite)),
            .note(NoteRecord(name: "n", wallNanos: 0)),
        ]
        for record in records {
            #expect(
                LedgerLines.writesLine(for: record) == (LedgerLines.event(for: record, session: "s") != nil),
                "\(record)")
        }
        #expect(records.filter(LedgerLines.writesLine(for:)).count == 5)
    }
}
