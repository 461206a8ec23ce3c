// The optional span members added after schema 1 shipped (ledgerOnlySessions, orphaned,
// orphanedLowerMs): read when present, nil in reports written before them, and shown by the
// summary as lower bounds (`≥`), never as 0.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ReportSpanMembersTests {
    static let added = ["ledgerOnlySessions", "orphaned", "orphanedLowerMs"]

    /// The golden report as an older build wrote it: without the added members.
    static func olderGolden() throws -> [UInt8] {
        var report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: ReportFixture.golden)) as? [String: Any])
        var spans = try #require(report["spans"] as? [String: [String: Any]])
        for (name, var span) in spans {
            for key in added { span[key] = nil }
            spans[name] = span
        }
        report["spans"] = spans
        return [UInt8](try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys]))
    }

    @Test func theGoldenReportCarriesTheAddedMembers() throws {
        let report = try PerformanceReport(contentsOf: ReportFixture.golden)
        #expect(report.spans["api.get"]?.ledgerOnlySessions == 1)
        #expect(report.spans["sync.upload"]?.orphaned == 1)
        #expect(report.spans["sync.upload"]?.orphanedLowerMs == nil)
        #expect(report.spans["db.migrate"]?.orphanedLowerMs == 45_000)
        #expect(report.spans["db.query"]?.orphaned == nil)
    }

    @Test func anOlderReportWithoutThemStillReadsStrictly() throws {
        let bytes = try Self.olderGolden()
        let text = String(decoding: bytes, as: UTF8.self)
        for key in Self.added {
            let present = text.contains("\"\(key)\":")
            #expect(!present, "\(key) was removed")
        }
        let report = try PerformanceReport(bytes: bytes, path: "older.json")
        #expect(report.problems.isEmpty)
        for (name, span) in report.spans {
            #expect(span.ledgerOnlySessions == nil && span.orphaned == nil && span.orphanedLowerMs == nil, "\(name)")
        }
        #expect(report.spans["api.get"]?.count == 61)
        // Re-encoding writes none of them back.
        let again = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        for key in Self.added {
            let written = again.contains("\"\(key)\":")
            #expect(!written, "\(key) is not written back")
        }
    }

    @Test func aWrongTypeIsAProblemNamingItsKeyPath() throws {
        let text = """
            {"schema":"perf-report","schemaVersion":1,"sessions":[],
             "spans":{"a":{"count":1,"orphaned":"three","orphanedLowerMs":5.5}}}
            """
        #expect(throws: Perf.ReportError.self) { try PerformanceReport(bytes: Array(text.utf8), path: "bad.json") }
        let lenient = try PerformanceReport(bytes: Array(text.utf8), path: "bad.json", reading: .lenient)
        #expect(lenient.problems.contains { "\($0)".contains("spans.a.orphaned") })
    }

    static func histogram(_ millis: [Double]) -> Perf.Histogram {
        var histogram = Perf.Histogram()
        for ms in millis { histogram.record(nanos: UInt64(ms * 1_000_000)) }
        return histogram
    }

    /// Three orphans of a measured span (the longest open at least 5.2 s) and one of a span
    /// nothing measured (an older ledger's line, no bound).
    static func orphanReport() -> PerformanceReport {
        let upload = histogram(Array(repeating: 50, count: 10) + [1_200, 5_200])
        return PerformanceReport(spans: [
            "sync.upload": .init(
                count: 13, sumMs: 6_900, minMs: 50, maxMs: 5_200, p50Ms: 50, p90Ms: 1_200, p95Ms: 5_200, p99Ms: 5_200,
                histogram: upload, source: .histogram, budgetMs: 5_000, overBudget: 1, orphaned: 3,
                orphanedLowerMs: 5_200),
            "socket.session": .init(count: 1, histogram: Perf.Histogram(), source: .ledger, orphaned: 1),
            "api.get": .init(count: 4, maxMs: 3, p50Ms: 1, p95Ms: 3, histogram: histogram([1, 1, 2, 3])),
        ])
    }

    /// The P50, P95, P99 and MAX cells of a span row (after the name, its `*` and the count).
    static func durationCells(_ row: Substring) -> [Substring] {
        let cells = row.split(separator: " ").filter { $0 != "*" }
        return Array(cells.dropFirst(2).prefix(4))
    }

    @Test func theSummaryShowsOrphansAsLowerBoundsNeverAsZero() throws {
        let summary = ReportSummary(report: Self.orphanReport(), path: "orphans.json")
        let text = summary.text
        #expect(text.contains("3 orphaned (open ≥ 5.2 s)"))
        #expect(text.contains("1 orphaned (open for an unknown time)"))
        let lines = text.split(separator: "\n")
        let unknown = try #require(lines.first { $0.hasPrefix("  socket.session *") })
        #expect(Self.durationCells(unknown) == ["-", "-", "-", "-"], "nothing measured, nothing shown: \(unknown)")
        let upload = try #require(lines.first { $0.hasPrefix("  sync.upload ") })
        #expect(upload.contains("≥5200.0"), "the maximum is an orphan's lower bound: \(upload)")
        let measured = try #require(lines.first { $0.hasPrefix("  api.get ") })
        #expect(!measured.contains("≥") && measured.contains("3.0"))
        let listed = text.components(separatedBy: "left open by a crashed process:").last ?? ""
        #expect(!listed.contains("api.get"), "only spans with orphans are listed")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let spans = try #require(object["spans"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: spans.map { ($0["name"] as? String ?? "", $0) })
        #expect(byName["sync.upload"]?["orphaned"] as? Int == 3)
        #expect(byName["sync.upload"]?["orphanedLowerMs"] as? Double == 5_200)
        #expect(byName["socket.session"]?["orphanedLowerMs"] is NSNull)
        #expect(byName["api.get"]?["orphaned"] == nil, "only spans with orphans carry the members")
    }

    @Test func theGoldenSummaryListsTheFixturesOrphans() throws {
        let text = try ReportSummary(contentsOf: ReportFixture.golden).text
        #expect(text.contains("left open by a crashed process:"))
        #expect(text.contains("1 orphaned (open ≥ 45.0 s)"))
        #expect(text.contains("1 orphaned (open for an unknown time)"))
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("  sync.upload *") })
        #expect(Self.durationCells(row) == ["-", "-", "-", "-"], "\(row)")
    }

    @Test(arguments: [
        (0.000_025, "25 ns"), (0.83, "830 µs"), (850.0, "850.0 ms"), (5_200, "5.2 s"), (750_000, "12.5 min"),
        (10_800_000, "3.0 h"),
    ])
    func openTimesReadInTheirUnit(ms: Double, text: String) {
        #expect(ReportSummary.duration(ms: ms) == text)
    }
}
