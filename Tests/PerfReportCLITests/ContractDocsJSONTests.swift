// ReportFormat.md's "How JSON is read" against the readers: the refusal it quotes is the one a
// report and a budgets file with that comma get, a ledger line with one is malformed, and the
// nesting limits it states are the code's.
import Foundation
import PerfCore
import PerfReport
import Testing

@testable import Perf

@Suite struct ContractDocsJSONTests {
    /// The section's text, its lines joined with spaces (quotes wrap across lines).
    static func section() throws -> String {
        let lines = try ContractArticle(module: "Perf", "ReportFormat").section("### How JSON is read")
        return lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// The problem the section quotes: `not valid JSON (<problem>)`.
    static func quotedProblem() throws -> String {
        let text = try section()
        let start = try #require(text.range(of: "`not valid JSON ("), "the section quotes a refusal")
        let end = try #require(text.range(of: ")`", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theQuotedRefusalIsWhatAReportAndABudgetsFileGet() throws {
        let problem = try Self.quotedProblem()
        #expect(problem.hasPrefix("line 3, column 12: a trailing comma before '}'"), "\(problem)")
        // The comma is the twelfth character of the third line, before a '}'.
        let report = "{\"schema\": \"perf-report\",\n\"schemaVersion\": 1, \"sessions\": [],\n\"spans\": {},}\n"
        #expect(throws: Perf.ReportError(.invalidReport, path: "r.json", "not valid JSON (\(problem))")) {
            try PerformanceReport(bytes: Array(report.utf8), path: "r.json")
        }
        let budgets = "{\"version\": 1,\n\"defaults\": {\"level\": \"warn\"},\n\"spans\": [],}\n"
        #expect(throws: BudgetsError(.invalidBudgets, path: "b.json", rule: nil, problem)) {
            try Budgets(bytes: Array(budgets.utf8), path: "b.json")
        }
        let line = #"{"v":1,"ts":"2026-12-02T12:00:00.000Z","kind":"note","name":"n","session":"s",}"#
        #expect(Array(line.utf8).withUnsafeBufferPointer { LedgerLineParser.parseObject($0) } == nil)
    }

    @Test func theNestingLimitsAreTheCodes() throws {
        let text = try Self.section()
        #expect(
            text.contains(
                "nested at most \(JSONScanner.defaultMaximumDepth) deep (\(LedgerLineParser.maximumDepth) in a "
                    + "ledger line)"), "\(text)")
    }
}
