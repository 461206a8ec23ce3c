// The optional span members added after schema 1 shipped (ledgerOnlySessions, orphaned,
// orphanedLowerMs): read when present, nil in reports written before them.
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
}
