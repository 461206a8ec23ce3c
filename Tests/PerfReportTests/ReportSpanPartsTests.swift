// A span line's children, selfMs, scope, parentScope and profile survive the report builder and a
// second trip through the report model, and a part of the wrong shape reads as absent.
import Foundation
import PerfCore
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ReportSpanPartsTests {
    typealias F = SpanProfileFixture

    @Test func theBuiltReportKeepsEverySpanPart() throws {
        let report = try F.report()
        #expect(report.problems.isEmpty)
        let spans = report.ledger.events.filter { $0.kind == .span }
        #expect(spans.count == 4)
        let parent = try #require(spans.first { $0.scope == 7 })
        #expect(parent.children == [.init(name: "db.query", count: 3, totalMs: 120, maxMs: 60)])
        #expect(parent.selfMs == 380)
        #expect(parent.parentScope == nil)
        let expected = try #require(F.lines.first { $0.extra["scope"] == .int(7) }?.profile)
        #expect(parent.profile == expected)
        #expect(parent.profile?.top.map(\.count) == [37, 10, 3])
        #expect(parent.profile?.suspended == 2 && parent.profile?.missed == 1)
        let child = try #require(spans.first { $0.parentScope == 7 })
        #expect(child.name == "db.query" && child.children.isEmpty && child.profile == nil && child.scope == nil)
    }

    @Test func aReportWrittenBackReadsTheSame() throws {
        let report = try F.report()
        let again = try PerformanceReport(bytes: Array(try JSONEncoder().encode(report)), path: "again.json")
        #expect(again.ledger.events == report.ledger.events)
        let parent = try #require(again.ledger.events.first { $0.scope == 9 })
        #expect(parent.profile?.samples == 20)
        #expect(parent.profile?.top.first?.frames == F.parseStack)
    }

    @Test(arguments: [
        #"{"profile":"lots","children":{"name":"x"},"selfMs":"12","scope":"7","parentScope":1.5}"#,
        #"{"profile":{"samples":-1,"intervalMs":10},"children":[{"name":"x","count":-2,"totalMs":1,"maxMs":1}]}"#,
        #"{"profile":{"samples":3,"intervalMs":"ten","top":[{"count":3}]},"children":["a","b"],"selfMs":-4}"#,
        #"{"profile":{"samples":3,"intervalMs":10,"top":[{"count":"3"}]},"children":[{"count":1}]}"#,
    ])
    func partsOfTheWrongShapeReadAsAbsent(_ parts: String) throws {
        let line = #"{"ts":"2026-12-02T13:00:00.000Z","session":"s","kind":"span","name":"a","durationMs":5,"#
        let text =
            #"{"schema":"perf-report","schemaVersion":1,"sessions":[],"spans":{},"ledger":{"events":["#
            + line + parts.dropFirst() + "]}}"
        let report = try PerformanceReport(bytes: Array(text.utf8), path: "odd.json", reading: .lenient)
        let event = try #require(report.ledger.events.first)
        #expect(event.profile == nil)
        #expect(event.children.isEmpty)
        #expect(event.selfMs == nil)
        #expect(event.scope == nil && event.parentScope == nil)
        // Every reader still takes it.
        let input = ExportInput(report: report, path: "odd.json")
        _ = ReportSummary(report: report, path: "odd.json").text
        _ = HTMLExport.render(input)
        _ = ChromeTraceExport.render(input)
        _ = OTLPExport.render(input)
        _ = PprofExport.render(input)
    }
}
