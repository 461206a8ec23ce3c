// A burst of over-budget ends from many threads: every line the backlog can hold is written, what
// it cannot is counted in a `dropped` line with its cause, and OVER counts every end either way.
import Foundation
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct LedgerBurstTests {
        /// What one burst left: span lines of the name, the counts of `dropped` lines by cause, and
        /// the report's over-budget figures.
        struct Outcome {
            var lines = 0
            var dropped: [String: Int] = [:]
            var overBudget: Int64 = 0
            var overBudgetLines: Int64?
            /// `perf_ledger_dropped_lines_total{cause="backlog"}` scraped after the burst.
            var liveBacklogDrops: String?
        }

        /// Installs with the given caps, ends `perThread` over-budget spans on each of `threads`
        /// threads released at once, shuts down, and reads what the directory holds.
        private func burst(threads: Int, perThread: Int, backlogBytes: Int, report: Bool) throws -> Outcome {
            let directory = try TemporaryDirectory("ledger-burst")
            defer { directory.remove() }
            var configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "burst-test"), recording: .enabled,
                ledgerCapBytes: 64 << 20)
            configuration.ledgerBacklogBytes = backlogBytes
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<threads {
                let thread = Thread {
                    start.wait()
                    for _ in 0..<perThread { Perf.begin("burst.slow", slowMs: 0).end() }
                    group.leave()
                }
                group.enter()
                thread.start()
            }
            for _ in 0..<threads { start.signal() }
            group.wait()
            var outcome = Outcome()
            _ = PerfState.runtime()?.recorder.pipeline.flush()
            outcome.liveBacklogDrops = PrometheusGrammar.value(
                in: PrometheusGrammar.samples(Array(Perf.prometheusText().utf8)), "perf_ledger_dropped_lines_total",
                ["cause": "backlog"])
            Perf.shutdown()
            for event in try LedgerReader(directory: directory.url).readAll().events {
                if event.kind == .span, event.name == "burst.slow" { outcome.lines += 1 }
                if event.kind == .dropped, case .string(let cause)? = event.extra["cause"] {
                    outcome.dropped[cause, default: 0] += event.count ?? 0
                }
            }
            guard report else { return outcome }
            let built = try PerformanceReport(
                bytes: try ReportBuilder(directory: directory.url).build(), path: "b.json")
            outcome.overBudget = built.spans["burst.slow"]?.overBudget ?? 0
            outcome.overBudgetLines = built.spans["burst.slow"]?.overBudgetLines
            return outcome
        }

        @Test(arguments: 0..<10)
        func eightThreadsLoseNoLineThatFitsTheDefaultBacklog(run: Int) throws {
            let outcome = try burst(threads: 8, perThread: 2_000, backlogBytes: 4 << 20, report: run == 0)
            #expect(outcome.lines == 16_000, "run \(run): \(outcome)")
            #expect(outcome.dropped.isEmpty, "run \(run): \(outcome)")
            if run == 0 {
                #expect(outcome.overBudget == 16_000)
                #expect(outcome.overBudgetLines == 16_000)
            }
        }

        /// Ten runs, as the eight-thread burst (about 2 s each in a debug build); `PERF_BURST_RUNS`
        /// asks for another number.
        @Test(arguments: 0..<(Int(ProcessInfo.processInfo.environment["PERF_BURST_RUNS"] ?? "") ?? 10))
        func aSmallBacklogCountsEveryLineItDrops(run: Int) throws {
            let outcome = try burst(threads: 32, perThread: 2_000, backlogBytes: 256 * 1024, report: run == 0)
            #expect(outcome.lines + outcome.dropped.values.reduce(0, +) == 64_000, "run \(run): \(outcome)")
            print("burst run \(run): \(outcome.lines) lines, dropped \(outcome.dropped)")
            #expect(Set(outcome.dropped.keys).isSubset(of: [DropCause.backlog.rawValue]), "run \(run): \(outcome)")
            #expect(
                outcome.liveBacklogDrops == "\(outcome.dropped["backlog"] ?? 0)",
                "the metrics count what the ledger says")
            if run == 0 {
                #expect(outcome.overBudget == 64_000, "OVER counts every end, written or dropped")
                #expect(outcome.overBudgetLines == Int64(outcome.lines))
            }
        }
    }
}
