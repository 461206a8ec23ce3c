// The Prometheus export: the text format's grammar line by line (`PrometheusGrammar`, in
// PerfTestSupport), histogram rules, escaping of hostile names, the families we promise, and a
// golden file.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportPrometheusTests {
    @Test func fixtureMatchesTheGoldenFile() throws {
        try ExportFixture.expectGolden(PrometheusExport.render(try ExportFixture.input()), "golden.prom")
    }

    @Test(arguments: [true, false])
    func everyLineFollowsTheGrammar(intervals: Bool) throws {
        let bytes = PrometheusExport.render(try ExportFixture.input(intervals: intervals))
        #expect(PrometheusGrammar.problems(bytes) == [])
        let text = String(decoding: bytes, as: UTF8.self)
        for family in [
            "perf_span_duration_seconds", "perf_span_over_budget_total", "perf_hangs_total", "perf_hangs_fatal_total",
            "perf_hangs_suppressed_total", "perf_hang_duration_seconds", "perf_sessions",
            "perf_process_resident_memory_bytes", "perf_report_generated_timestamp_seconds", "perf_app_info",
        ] {
            #expect(text.contains("# HELP \(family) ") && text.contains("# TYPE \(family) "), "\(family)")
        }
    }

    @Test func grammarCatchesWhatTheCollectorRejects() {
        let valid = "# HELP x_total X.\n# TYPE x_total counter\nx_total{a=\"1\"} 3\n"
        #expect(PrometheusGrammar.problems(Array(valid.utf8)) == [])
        for broken in [
            valid.replacingOccurrences(of: "} 3", with: "} 3 1700000000000"),  // a timestamp
            valid.replacingOccurrences(of: "a=\"1\"", with: "a=\"x\\q\""),  // an unknown escape
            valid + "x_total{a=\"1\"} 4\n",  // a duplicate series
            valid + "# HELP y Y.\n# TYPE y gauge\ny 1\nx_total{a=\"2\"} 2\n",  // a family split in two
            "x 1\n",  // no HELP or TYPE
        ] {
            #expect(!PrometheusGrammar.problems(Array(broken.utf8)).isEmpty, "\(broken)")
        }
    }

    @Test func histogramsAreCumulativeAndMatchTheSpanStatistics() throws {
        let input = try ExportFixture.input()
        let samples = PrometheusGrammar.samples(PrometheusExport.render(input))
        let buckets = samples.filter {
            $0.name == "perf_span_duration_seconds_bucket" && $0.labels["span"] == "api.get"
        }
        // api.get: 0.8, 0.9, 1.2, 4 and 30 ms.
        let expected: [String: String] = [
            "0.0005": "0", "0.001": "2", "0.0025": "3", "0.005": "4", "0.025": "4", "0.05": "5",
        ]
        for (bound, count) in expected {
            #expect(buckets.first { $0.labels["le"] == bound }?.value == count, "le \(bound)")
        }
        #expect(buckets.count == PrometheusText.bounds.count + 1)
        let sum = samples.first { $0.name == "perf_span_duration_seconds_sum" && $0.labels["span"] == "api.get" }
        #expect(abs((sum.flatMap { Double($0.value) } ?? 0) - 0.0369) < 1e-9)
        #expect(
            !samples.contains { $0.labels["span"] == "boot" && $0.name.hasPrefix("perf_span_duration") },
            "a ledger-only span is not a distribution")
        #expect(samples.contains { $0.name == "perf_span_over_budget_total" && $0.labels["span"] == "boot" })
        let hangs = samples.filter { $0.name == "perf_hang_duration_seconds_bucket" && $0.labels["target"] == "main" }
        #expect(hangs.first { $0.labels["le"] == "0.25" }?.value == "1" && hangs.last?.value == "2")
    }

    @Test func hostileNamesAreEscapedAndReadBack() throws {
        let bytes = PrometheusExport.render(try ExportFixture.input())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#"span="a\"b\\c\nd""#))
        #expect(text.contains(#"app="my\"service""#))
        let samples = PrometheusGrammar.samples(bytes)
        #expect(samples.contains { $0.labels["span"] == ExportFixture.hostile })
        #expect(PrometheusText.escapeHelp("a\\b\nc\"") == "a\\\\b\\nc\"", "HELP escapes only backslash and newline")
    }

    @Test func totalsSessionsMemoryAndIdentity() throws {
        let samples = PrometheusGrammar.samples(PrometheusExport.render(try ExportFixture.input()))
        func value(_ name: String, _ labels: [String: String] = [:]) -> String? {
            PrometheusGrammar.value(in: samples, name, labels)
        }
        #expect(value("perf_hangs_total") == "1")
        #expect(value("perf_hangs_fatal_total") == "1")
        #expect(value("perf_sessions", ["status": "crashed"]) == "1")
        #expect(value("perf_sessions", ["status": "active"]) == "0")
        #expect(value("perf_process_resident_memory_bytes") == "70000000", "the newest sample")
        #expect(value("perf_app_info", ["name": "my\"service", "version": "1.4.0", "build": "812"]) == "1")
        #expect(value("perf_report_generated_timestamp_seconds") == "1796213405")
        #expect(value("perf_span_budget_seconds", ["span": "api.get"]) == "0.025")
        #expect(samples.allSatisfy { $0.labels["app"] == "my\"service" }, "every series names its app")
    }
}
