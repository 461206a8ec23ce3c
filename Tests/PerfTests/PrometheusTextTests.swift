// `Perf.prometheusText()` on the installed runtime: spans of known durations (an injected clock)
// give the export's buckets, sums, budget and over-budget counts; scrapes never go backwards; hang
// totals; escaping; and before install a valid exposition with the app's identity and zeros.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct PrometheusTextTests {
        /// Installs (recording off unless asked) with `clock`, runs `body`, shuts down.
        private func withInstalled(
            clock: any PerfClock = SystemClock(), recording: Perf.Recording = .disabled, app: String = "prom-test",
            _ body: () throws -> Void
        ) throws {
            let directory = try TemporaryDirectory("prometheus-text")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: app, version: "2.1", build: "77"),
                recording: recording)
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: clock, report: { _ in }))
            defer { Perf.shutdown() }
            try body()
        }

        private func samples(_ text: String) -> [PrometheusGrammar.Sample] {
            PrometheusGrammar.samples(Array(text.utf8))
        }

        private func value(
            _ samples: [PrometheusGrammar.Sample], _ name: String, _ labels: [String: String] = [:]
        ) -> String? {
            PrometheusGrammar.value(in: samples, name, labels)
        }

        /// Ends a span of `api.get` (budget 25 ms) lasting `ms` on the manual clock.
        private func span(_ clock: ManualClock, ms: UInt64) {
            let span = Perf.begin("prom.api.get", slowMs: 25)
            clock.advance(byNanos: ms * 1_000_000 + 100_000)
            span.end()
        }

        @Test func spansOfKnownDurationsGiveBucketsSumCountBudgetAndOverBudget() throws {
            let clock = ManualClock()
            try withInstalled(clock: clock) {
                // 0.1 + {0, 2, 4, 30, 200} ms: buckets 0.5 ms, 2.5 ms, 5 ms, 50 ms, 250 ms.
                for ms: UInt64 in [0, 2, 4, 30, 200] { span(clock, ms: ms) }
                let text = Perf.prometheusText()
                #expect(PrometheusGrammar.problems(Array(text.utf8)) == [], "\(text)")
                let all = samples(text)
                let span = ["span": "prom.api.get", "app": "prom-test"]
                let expected: [String: String] = [
                    "0.0005": "1", "0.001": "1", "0.0025": "2", "0.005": "3", "0.01": "3", "0.025": "3",
                    "0.05": "4", "0.1": "4", "0.25": "5", "60": "5", "+Inf": "5",
                ]
                for (bound, count) in expected {
                    #expect(
                        value(all, "perf_span_duration_seconds_bucket", span.merging(["le": bound]) { $1 }) == count,
                        "le \(bound)")
                }
                let buckets = all.filter {
                    $0.name == "perf_span_duration_seconds_bucket" && $0.labels["span"] == "prom.api.get"
                }
                #expect(buckets.count == PrometheusText.bounds.count + 1)
                #expect(value(all, "perf_span_duration_seconds_count", span) == "5")
                let sum = try #require(value(all, "perf_span_duration_seconds_sum", span).flatMap(Double.init))
                #expect(abs(sum - 0.2365) < 0.0005, "histogram sum within its bucket precision: \(sum)")
                #expect(value(all, "perf_span_budget_seconds", span) == "0.025")
                #expect(value(all, "perf_span_over_budget_total", span) == "2", "30 ms and 200 ms are over 25 ms")
                #expect(value(all, "perf_sessions", ["status": "active"]) == "1")
                #expect(value(all, "perf_sessions", ["status": "crashed"]) == "0")
                #expect(value(all, "perf_app_info", ["name": "prom-test", "version": "2.1", "build": "77"]) == "1")
                let resident = try #require(value(all, "perf_process_resident_memory_bytes").flatMap(UInt64.init))
                #expect(resident > 1 << 20, "this process has more than a MiB resident")
                #expect(all.allSatisfy { $0.labels["app"] == "prom-test" }, "every series names its app")
                #expect(!text.contains("perf_report_generated_timestamp_seconds"), "no report, no report time")
            }
        }

        @Test func aBudgetNeverBreachedIsReadFromTheFlightRecorder() throws {
            let clock = ManualClock()
            try withInstalled(clock: clock) {
                let span = Perf.begin("prom.quiet", slowMs: 1_500)
                clock.advance(byMilliseconds: 1)
                span.end()
                let all = samples(Perf.prometheusText())
                #expect(value(all, "perf_span_budget_seconds", ["span": "prom.quiet"]) == "1.5")
                #expect(value(all, "perf_span_over_budget_total", ["span": "prom.quiet"]) == "0")
            }
        }

        @Test func countersNeverGoBackwardsAcrossScrapes() throws {
            let seed = SeededRandom.makeSeed()
            var random = SeededRandom(seed: seed)
            let clock = ManualClock()
            try withInstalled(clock: clock) {
                var previous: [String: Double] = [:]
                for round in 0..<4 {
                    for _ in 0..<Int(random.next() % 20 + 1) { span(clock, ms: random.next() % 60) }
                    if round == 2 { emitHang(suppressed: nil) }
                    let text = Perf.prometheusText()
                    #expect(PrometheusGrammar.problems(Array(text.utf8)) == [], "seed \(seed)")
                    let types = PrometheusGrammar.families(Array(text.utf8))
                    var current: [String: Double] = [:]
                    for sample in samples(text) {
                        let family = types.keys.first { sample.name.hasPrefix($0) } ?? sample.name
                        guard types[family] == "counter" || types[family] == "histogram" else { continue }
                        let key = sample.name + sample.labels.sorted { $0.key < $1.key }.description
                        current[key] = Double(sample.value)
                    }
                    for (key, before) in previous {
                        let now = try #require(current[key], "seed \(seed): \(key) vanished")
                        #expect(now >= before, "seed \(seed): \(key) went from \(before) to \(now)")
                    }
                    previous = current
                }
                #expect(previous.count > 20, "buckets, sums, counts and totals were compared")
            }
        }

        private func emitHang(suppressed: String?, fatal: Bool = false) {
            PerfState.runtime()?.recorder.pipeline.emit(
                .hang(
                    HangRecord(
                        kind: .hang, lowerMs: 600, upperMs: 650, stallMs: 0, fatal: fatal, suppressed: suppressed,
                        thread: "worker (tid 1)", stack: [], stuckFrames: [], culprit: "Store.load()",
                        targetName: "prom.queue", wallNanos: 1, durationMs: 625)))
        }

        @Test func hangTotalsCountHangsFatalOnesAndSuppressedOnes() throws {
            try withInstalled {
                emitHang(suppressed: nil)
                emitHang(suppressed: nil, fatal: true)
                emitHang(suppressed: "stopped")
                let all = samples(Perf.prometheusText())
                #expect(value(all, "perf_hangs_total") == "2")
                #expect(value(all, "perf_hangs_fatal_total") == "1")
                #expect(value(all, "perf_hangs_suppressed_total") == "1")
            }
        }

        @Test func labelValuesAreEscaped() throws {
            try withInstalled(app: "my\"service\\\n") {
                Perf.begin("prom.a\"b\\c\nd", slowMs: nil).end()
                let text = Perf.prometheusText()
                #expect(PrometheusGrammar.problems(Array(text.utf8)) == [])
                #expect(text.contains(#"span="prom.a\"b\\c\nd""#))
                #expect(text.contains(#"app="my\"service\\\n""#))
                #expect(samples(text).contains { $0.labels["span"] == "prom.a\"b\\c\nd" })
            }
        }

        @Test func everyLineIsHelpTypeOrASample() throws {
            try withInstalled {
                for _ in 0..<3 { Perf.begin("prom.lines", slowMs: 0).end() }
                emitHang(suppressed: nil)
                let text = Perf.prometheusText()
                #expect(text.hasSuffix("\n"))
                for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                    let ok =
                        line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") || PrometheusGrammar.sample(line) != nil
                    #expect(ok, "\(line)")
                }
            }
        }

        @Test func beforeInstallTheTextIsValidWithTheAppAndNoSession() {
            Perf.shutdown()
            let text = Perf.prometheusText()
            #expect(PrometheusGrammar.problems(Array(text.utf8)) == [])
            let all = samples(text)
            #expect(all.contains { $0.name == "perf_app_info" && $0.value == "1" })
            #expect(all.filter { $0.name != "perf_app_info" }.allSatisfy { $0.value == "0" }, "\(text)")
            #expect(!text.contains("perf_span_") && !text.contains("perf_hang_duration"))
        }
    }
}
