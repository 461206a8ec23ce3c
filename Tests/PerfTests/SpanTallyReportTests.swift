// Over-budget and exit counts from span memory, end to end: the report's OVER is every end over
// budget whatever the ledger's cap kept, failures under budget are counted, and the live metrics
// say the same.
import Foundation
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct SpanTallyReportTests {
        private struct Thrown: Error {}

        /// Installs into a fresh directory with the ledger capped at `capBytes`, runs `body`, shuts
        /// down, and returns the report built from the directory.
        private func report(capBytes: Int, _ body: () -> Void) throws -> PerformanceReport {
            let directory = try TemporaryDirectory("span-tally")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "tally-test"), recording: .enabled,
                ledgerCapBytes: capBytes)
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            body()
            Perf.shutdown()
            return try PerformanceReport(bytes: try ReportBuilder(directory: directory.url).build(), path: "tally.json")
        }

        @Test func overBudgetCountsEveryEndWhateverTheCapKept() throws {
            let report = try report(capBytes: 16 * 1024) {
                for _ in 0..<2_000 { Perf.begin("tally.capped", slowMs: 0).end() }
            }
            let span = try #require(report.spans["tally.capped"])
            #expect(span.count == 2_000)
            #expect(span.overBudget == 2_000)
            let held = try #require(span.overBudgetLines)
            #expect(held > 0 && held < 2_000, "the 16 KiB cap (and its .prev) keep only the newest lines: \(held)")
            let lines = report.ledger.events.filter { $0.kind == .span && $0.name == "tally.capped" }.count
            #expect(Int64(lines) == held, "overBudgetLines is what the ledger holds")
        }

        @Test func failuresUnderBudgetAreCountedInTheReportAndTheMetrics() throws {
            var scrape = ""
            let report = try report(capBytes: 512 * 1024) {
                for index in 0..<900 {
                    _ = try? Perf.measure("tally.fails", slowMs: 60_000) { () throws(Thrown) -> Int in
                        if index % 2 == 0 { throw Thrown() }
                        return index
                    }
                }
                scrape = Perf.prometheusText()
            }
            let span = try #require(report.spans["tally.fails"])
            #expect(span.count == 900)
            #expect(span.overBudget == 0)
            #expect(span.exits == ["failure": 450])
            #expect(report.ledger.events.filter { $0.name == "tally.fails" }.isEmpty, "under budget: no line")
            let samples = PrometheusGrammar.samples(Array(scrape.utf8))
            #expect(
                PrometheusGrammar.value(
                    in: samples, "perf_span_exits_total", ["span": "tally.fails", "exit": "failure"])
                    == "450")
            #expect(
                PrometheusGrammar.value(
                    in: samples, "perf_span_exits_total", ["span": "tally.fails", "exit": "cancelled"])
                    == "0")
        }
    }
}

extension PerfGlobalStateTests.SpanTallyReportTests {
    /// Ends one span of each of 24 names with room for 16: the 8 past the capacity are counted.
    @Test func spanEndsPastTheNameCapacityAreCountedInTheReport() throws {
        let names: [StaticString] = [
            "cap.00", "cap.01", "cap.02", "cap.03", "cap.04", "cap.05", "cap.06", "cap.07", "cap.08", "cap.09",
            "cap.10", "cap.11", "cap.12", "cap.13", "cap.14", "cap.15", "cap.16", "cap.17", "cap.18", "cap.19",
            "cap.20", "cap.21", "cap.22", "cap.23",
        ]
        let directory = try TemporaryDirectory("span-capacity")
        defer { directory.remove() }
        var configuration = Perf.Configuration(
            directory: directory.url, app: Perf.AppInfo(name: "capacity-test"), recording: .enabled)
        configuration.spanNameCapacity = 16
        Perf.shutdown()
        #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
        defer { Perf.shutdown() }
        for name in names { Perf.begin(name, slowMs: 60_000).end() }
        Perf.shutdown()
        let report = try PerformanceReport(bytes: try ReportBuilder(directory: directory.url).build(), path: "c.json")
        #expect(report.input?.droppedSpanRecords == 8)
        #expect(report.spans.count == 16)
    }
}

@Suite struct DroppedLineCauseTests {
    /// Every dropped line's count is kept, however many causes a (damaged) ledger names.
    @Test func causesAreBoundedAndNoCountIsLost() {
        var digest = LedgerDigest(keepBytes: 1 << 20)
        for index in 0..<20 {
            var line = LedgerEvent(kind: .dropped, name: "ledger", session: "s", timestampMs: Int64(index))
            line.count = 3
            line.extra["cause"] = .string(index < 2 ? "backlog" : "cause-\(index)")
            digest.add(line)
        }
        #expect(digest.droppedLines.count <= 9)
        #expect(digest.droppedLines["backlog"] == 6)
        #expect(digest.droppedLines.values.reduce(0, +) == 60)
    }
}
