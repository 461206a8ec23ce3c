// Orphaned spans in the exports: a span a crashed process left open is drawn from its start for
// the time it is known to have been open, labelled as a lower bound, and never shown as 0.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportOrphanTests {
    typealias F = ExportFixture

    /// The export fixture with two orphans of crashed session A: one open at least 45 s (a line
    /// with `durationMs` and `lowerMs`), one for an unknown time (an older ledger's line). Both
    /// start inside the span of time A's flight recorder covers, which never holds an orphan.
    static func input() throws -> ExportInput {
        var report = F.reportObject()
        var ledger = try #require(report["ledger"] as? [String: Any])
        var events = try #require(ledger["events"] as? [[String: Any]])
        events.insert(
            contentsOf: [
                F.line(
                    "span", "db.migrate", session: F.sessionA, atMs: F.epochA + 20,
                    ["durationMs": 45_000, "lowerMs": 45_000, "budgetMs": 10_000, "exit": "orphaned"]),
                F.line("span", "socket.session", session: F.sessionA, atMs: F.epochA + 21, ["exit": "orphaned"]),
            ], at: 2)
        ledger["events"] = events
        report["ledger"] = ledger
        var spans = try #require(report["spans"] as? [String: Any])
        var migrate = F.statistics([45_000], budgetMs: 10_000, overBudget: 1, source: "ledger")
        migrate["orphaned"] = 1
        migrate["orphanedLowerMs"] = 45_000
        spans["db.migrate"] = migrate
        spans["socket.session"] = [
            "count": 1, "sum": 0, "min": 0, "max": 0, "p50Ms": 0, "p90Ms": 0, "p95Ms": 0, "p99Ms": 0,
            "histogram": F.histogram([]), "source": "ledger", "budgetMs": NSNull(), "overBudget": 0, "sites": [],
            "orphaned": 1,
        ]
        report["spans"] = spans
        return try ExportInput(bytes: F.bytes(report), path: "orphans.json")
    }

    @Test func theReaderPlacesAnOrphanFromItsStart() throws {
        let events = try Self.input().events.filter { $0.exit == .orphaned }
        let migrate = try #require(events.first { $0.name == "db.migrate" })
        #expect(migrate.startUnixNanos == (F.epochA + 20) * 1_000_000, "ts is where it began")
        #expect(migrate.timeUnixNanos == (F.epochA + 20 + 45_000) * 1_000_000)
        let unknown = try #require(events.first { $0.name == "socket.session" })
        #expect(unknown.startUnixNanos == (F.epochA + 21) * 1_000_000 && unknown.durationMs == nil)
    }

    @Test func chromeDrawsTheKnownPartAndSaysItIsALowerBound() throws {
        let document = try F.json(ChromeTraceExport.render(try Self.input()))
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let slices = events.filter { $0["cat"] as? String == "ledger" }
        let migrate = try #require(slices.first { $0["name"] as? String == "db.migrate" })
        #expect(ExportChromeTests.number(migrate["dur"]) == 45_000_000, "microseconds")
        let migrateArgs = try #require(migrate["args"] as? [String: Any])
        #expect(migrateArgs["open"] as? String == "≥ 45000.0 ms")
        let unknown = try #require(slices.first { $0["name"] as? String == "socket.session" })
        let unknownArgs = try #require(unknown["args"] as? [String: Any])
        #expect(unknownArgs["open"] as? String == "for an unknown time")
        #expect(ExportChromeTests.number(migrate["ts"]) < ExportChromeTests.number(unknown["ts"]))
    }

    @Test func htmlShowsBoundsAndNoZeroDurations() throws {
        let page = String(decoding: HTMLExport.render(try Self.input()), as: UTF8.self)
        let spans = HTMLStructure.section("histograms", in: page)
        #expect(spans.contains("1 orphaned, open ≥ 45s"))
        #expect(spans.contains("1 orphaned, open for an unknown time"))
        let row = try #require(spans.components(separatedBy: "<tr>").first { $0.hasPrefix("<td>socket.session<") })
        #expect(!row.contains(">0ms<") && row.contains(">–<"), "no duration for a span nothing measured: \(row)")
        let card = try #require(
            spans.components(separatedBy: "</figure>").first { $0.contains("<b>socket.session</b>") }?
                .components(separatedBy: "<figure").last)
        #expect(!card.contains("0ms") && card.contains("No duration"), "\(card)")
        let slowest = HTMLStructure.section("slowest", in: page)
        #expect(slowest.contains("≥ 45s"))
        #expect(HTMLStructure.problems(page).isEmpty)
    }
}
