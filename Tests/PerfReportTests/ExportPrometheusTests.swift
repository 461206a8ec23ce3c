// The Prometheus export: the text format's grammar line by line, histogram rules, escaping of
// hostile names, the families we promise, and a golden file.
import Foundation
import Testing

@testable import Perf
@testable import PerfReport

/// A strict reader of text exposition 0.0.4 as node_exporter's textfile collector takes it.
enum PrometheusGrammar {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: String
    }

    static func isMetricName(_ name: Substring) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: Substring) -> Bool {
        isMetricName(name) && !name.contains(":")
    }

    /// One sample line, or nil when it breaks the grammar (a timestamp included).
    static func sample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = rest.prefix { $0 != "=" }
                guard isLabelName(label), labels[String(label)] == nil else { return nil }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.popFirst() else { return nil }
                    if character == "\"" { break }
                    if character == "\\" {
                        switch rest.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                labels[String(label)] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let value = rest.dropFirst()
        // Exactly one field after the series: a second one would be a timestamp.
        guard !value.contains(" "), ["+Inf", "-Inf", "NaN"].contains(value) || Double(value) != nil else { return nil }
        return Sample(name: String(name), labels: labels, value: String(value))
    }

    /// Every rule the exposition breaks, empty when it is valid.
    static func problems(_ bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.isEmpty || text.hasSuffix("\n") else { return ["no final newline"] }
        var problems: [String] = []
        var types: [String: String] = [:]
        var helped: Set<String> = []
        var finished: Set<String> = []
        var current: String?
        var series: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let fields = line.split(separator: " ", maxSplits: 3)
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                guard fields.count >= 4 || (fields.count == 3 && line.hasPrefix("# HELP ")), isMetricName(fields[2])
                else {
                    problems.append("bad comment: \(line)")
                    continue
                }
                let family = String(fields[2])
                if finished.contains(family) || types[family] != nil && line.hasPrefix("# TYPE ") {
                    problems.append("family \(family) announced twice")
                }
                if line.hasPrefix("# HELP ") {
                    helped.insert(family)
                } else {
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(fields[3]) else {
                        problems.append("bad type: \(line)")
                        continue
                    }
                    types[family] = String(fields[3])
                }
                if current != family, let current { finished.insert(current) }
                current = family
                continue
            }
            guard let sample = sample(line) else {
                problems.append("bad sample: \(line)")
                continue
            }
            guard let family = current, let type = types[family], helped.contains(family) else {
                problems.append("sample before HELP and TYPE: \(line)")
                continue
            }
            let allowed = type == "histogram" ? ["_bucket", "_sum", "_count"].map { family + $0 } : [family]
            if !allowed.contains(sample.name) { problems.append("\(sample.name) outside its family \(family)") }
            if type == "counter", !family.hasSuffix("_total") { problems.append("counter \(family) without _total") }
            let key =
                sample.name + "|"
                + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            if !series.insert(key).inserted { problems.append("duplicate series \(key)") }
        }
        return problems + histogramProblems(samples(bytes), types: types)
    }

    /// Buckets in increasing `le`, cumulative counts never decreasing, `+Inf` equal to `_count`.
    static func histogramProblems(_ samples: [Sample], types: [String: String]) -> [String] {
        var problems: [String] = []
        for (family, type) in types where type == "histogram" {
            let buckets = Dictionary(grouping: samples.filter { $0.name == family + "_bucket" }) { sample in
                sample.labels.filter { $0.key != "le" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            }
            for (series, lines) in buckets {
                let bounds = lines.compactMap { $0.labels["le"] }.map {
                    $0 == "+Inf" ? Double.infinity : Double($0) ?? .nan
                }
                let counts = lines.compactMap { Double($0.value) }
                if bounds != bounds.sorted() || bounds.last != .infinity {
                    problems.append("\(family) \(series): le order")
                }
                if counts != counts.sorted() { problems.append("\(family) \(series): buckets decrease") }
                let count = samples.first {
                    $0.name == family + "_count" && $0.labels == lines[0].labels.filter { $0.key != "le" }
                }
                if count?.value != lines.last?.value { problems.append("\(family) \(series): +Inf is not _count") }
            }
        }
        return problems
    }

    /// Every sample line.
    static func samples(_ bytes: [UInt8]) -> [Sample] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap(sample)
    }
}

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
        #expect(buckets.count == PrometheusExport.bounds.count + 1)
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
            samples.first { sample in
                sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
            }?.value
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
