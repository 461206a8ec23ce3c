// The live exposition (`Perf.prometheusText()`) and the report export write the same families,
// label names and buckets for the same data: one runtime (made on the side, never installed, so
// this suite touches no process-global Perf state but the hang histograms) records spans over and
// under budget and a hang, is scraped live, then reported and exported.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct PrometheusLiveFamiliesTests {
    @Test func liveAndExportWriteTheSameFamiliesAndLabels() throws {
        let directory = try TemporaryDirectory("prometheus-families")
        defer { directory.remove() }
        let runtime = try #require(
            PerfRuntime.make(
                configuration: Perf.Configuration(
                    directory: directory.url, app: Perf.AppInfo(name: "families", version: "3", build: "9"),
                    recording: .enabled),
                environment: [:], clock: SystemClock(), report: { Issue.record("unexpected message: \($0)") }))
        for budget: UInt64 in [0, 60_000_000_000, 0, 60_000_000_000] {
            let token = runtime.recorder.begin("families.span", budgetNanos: budget, site: CallSite())
            runtime.recorder.end(token)
        }
        runtime.recorder.pipeline.emit(
            .hang(
                HangRecord(
                    kind: .hang, lowerMs: 300, upperMs: 340, stallMs: 0, thread: "worker (tid 1)",
                    culprit: "Store.load()", targetName: "families.queue", wallNanos: runtime.clock.wallNanos(),
                    durationMs: 320)))
        // The export reads hang histograms from the snapshot, which takes them from the process's.
        PerfState.hangHistograms.record(name: "families.queue", nanos: 320_000_000)
        _ = try DiagnosticsCapture.capture(runtime, reason: "test")
        let live = LivePrometheus.metrics(
            runtime, hangTargets: PerfState.hangHistograms.snapshot(), residentMemoryBytes: 1 << 20
        ).render()
        runtime.shutdown()

        let report = try PerformanceReport(
            bytes: try ReportBuilder(directory: directory.url).build(), path: "performance-report.json")
        let exported = PrometheusExport.render(ExportInput(report: report, path: "performance-report.json"))
        #expect(PrometheusGrammar.problems(live) == [])
        #expect(PrometheusGrammar.problems(exported) == [])
        var exportedFamilies = PrometheusGrammar.families(exported)
        // A report has a time it was written; the live text is as of the scrape, which Prometheus stamps.
        #expect(exportedFamilies.removeValue(forKey: "perf_report_generated_timestamp_seconds") == "gauge")
        #expect(PrometheusGrammar.families(live) == exportedFamilies)
        #expect(exportedFamilies.count == 13, "\(exportedFamilies.keys.sorted())")

        // Per family, the same label names and (for histograms) the same buckets.
        func labelNames(_ bytes: [UInt8]) -> [String: Set<[String]>] {
            var names: [String: Set<[String]>] = [:]
            for sample in PrometheusGrammar.samples(bytes) {
                names[sample.name, default: []].insert(sample.labels.keys.sorted())
            }
            return names
        }
        var exportedLabels = labelNames(exported)
        exportedLabels["perf_report_generated_timestamp_seconds"] = nil
        #expect(labelNames(live) == exportedLabels)
        func buckets(_ bytes: [UInt8]) -> [String] {
            PrometheusGrammar.samples(bytes).filter { $0.name == "perf_span_duration_seconds_bucket" }
                .compactMap { $0.labels["le"] }
        }
        #expect(buckets(live) == buckets(exported) && !buckets(live).isEmpty)
        // And the same figures where both know them.
        func value(_ bytes: [UInt8], _ name: String) -> String? {
            PrometheusGrammar.samples(bytes).first { $0.name == name && $0.labels["span"] != nil }?.value
        }
        for name in ["perf_span_duration_seconds_count", "perf_span_over_budget_total", "perf_span_budget_seconds"] {
            #expect(value(live, name) == value(exported, name), "\(name)")
        }
        #expect(value(live, "perf_span_over_budget_total") == "2")
    }
}
