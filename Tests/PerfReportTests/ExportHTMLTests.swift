// The html export's page: structure, the timeline's rects, histogram budget lines, tables,
// escaping of hostile reports, old and empty reports, determinism and the golden page.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportHTMLTests {
    @Test func pageIsOneSelfContainedHTML5Document() throws {
        let page = try HTMLFixture.page()
        #expect(page.hasPrefix("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"))
        #expect(page.hasSuffix("</html>\n"))
        #expect(HTMLStructure.problems(page) == [])
        #expect(HTMLStructure.occurrences(of: "<svg class=\"timeline\"", in: page) == 1)
        #expect(HTMLStructure.occurrences(of: "<style>", in: page) == 1)
        for section in ["sessions", "timeline", "histograms", "slowest", "hangs"] {
            #expect(!HTMLStructure.section(section, in: page).isEmpty, "section \(section) missing")
        }
        #expect(page.contains("feedservice") && page.contains("2.4.0 &#40;812)"))
    }

    @Test func timelineDrawsOneRectPerIntervalColouredByOutcome() throws {
        let input = try HTMLFixture.input()
        let timeline = HTMLStructure.section(
            "timeline", in: String(decoding: HTMLExport.render(input), as: UTF8.self))
        #expect(input.intervals.count > 600)
        #expect(HTMLStructure.occurrences(of: "<rect class=\"span", in: timeline) == input.intervals.count)
        let failed = input.intervals.filter { $0.exit != "success" }.count
        let over = input.intervals.filter {
            $0.exit == "success" && Double($0.durationNanos) > ($0.budgetMs ?? .infinity) * 1e6
        }
        #expect(failed > 0 && !over.isEmpty)
        #expect(HTMLStructure.occurrences(of: "<rect class=\"span fail\"", in: timeline) == failed)
        #expect(HTMLStructure.occurrences(of: "<rect class=\"span over\"", in: timeline) == over.count)
        // One hang and one hitch per session, two notes per session, all inside the drawn window.
        #expect(HTMLStructure.occurrences(of: "<g class=\"hang\">", in: timeline) == 2)
        #expect(HTMLStructure.occurrences(of: "<g class=\"hitch\">", in: timeline) == 2)
        #expect(HTMLStructure.occurrences(of: "<g class=\"note\">", in: timeline) == 4)
        // The culprit as a person writes it (the report keeps the recorded symbol).
        #expect(timeline.contains("culprit&#58; Service.parseFeed&#40;)<"))
        // Lanes carry the thread names the flight recorder wrote.
        for name in ["main", "worker-1", "io"] { #expect(timeline.contains(">\(name)<tspan")) }
    }

    @Test func hangsSitOnTheLaneOfTheirThread() throws {
        let layout = HTMLTimelineLayout(try HTMLFixture.input())
        #expect(layout.blocks.map(\.session) == ["a1b2c3d4e5f60718", "0f1e2d3c4b5a6978"])
        for block in layout.blocks {
            let worker = try #require(block.lanes.first { $0.name == "worker-1" })
            #expect(worker.hangs.map(\.kind) == ["hang"])
            #expect(worker.hangs.first?.threadID == worker.threadID)
            #expect(block.lanes.first { $0.name == "main" }?.hangs.map(\.kind) == ["hitch"])
            #expect(block.lanes.contains { $0.rows > 1 }, "nested spans take a second row")
            #expect(block.notes.count == 2)
        }
    }

    @Test func histogramBudgetLineSitsAtTheBudgetOnTheLogAxis() throws {
        let input = try HTMLFixture.input()
        let section = HTMLStructure.section(
            "histograms", in: String(decoding: HTMLExport.render(input), as: UTF8.self))
        let charts = section.components(separatedBy: "<svg class=\"histogram\"").dropFirst()
        #expect(charts.count == min(input.spans.count, HTMLExport.maximumHistograms))
        var checked = 0
        for chart in charts.map({ $0.components(separatedBy: "</svg>")[0] }) {
            let lower = try #require(Double(Self.attribute("data-lo-ns", in: chart)))
            let upper = try #require(Double(Self.attribute("data-hi-ns", in: chart)))
            guard chart.contains("class=\"budget\"") else { continue }
            let label = try #require(chart.components(separatedBy: "budget ").last?.prefix { $0 != "<" })
            let budgetMs = try #require(BudgetQuantity(parsing: String(label))?.value)
            let x = try #require(Double(Self.attribute("x1", in: chart.components(separatedBy: "class=\"budget\"")[1])))
            let expected = 10 + (log10(budgetMs * 1e6) - log10(lower)) / (log10(upper) - log10(lower)) * 380
            #expect(abs(x - expected) < 0.2, "budget \(budgetMs) ms drawn at \(x), expected \(expected)")
            checked += 1
        }
        #expect(checked == 3, "api.get, db.query and cache.lookup have budgets")
        for quantile in ["p50", "p95", "p99"] { #expect(section.contains(quantile + " ")) }
    }

    @Test func sessionsShowTheirStatusWithCrashedInRed() throws {
        let sessions = HTMLStructure.section("sessions", in: try HTMLFixture.page())
        #expect(sessions.contains("<span class=\"badge status-crashed\">crashed</span>"))
        #expect(sessions.contains("<span class=\"badge status-terminated\">terminated</span>"))
        #expect(HTMLExport.style.contains(".badge.status-crashed{background:var(--hang)}"))
        #expect(HTMLExport.style.contains("--hang:#d92d20"))
    }

    @Test func slowestEventsAreListedLongestFirst() throws {
        let slowest = HTMLStructure.section("slowest", in: try HTMLFixture.page())
        let rows = slowest.components(separatedBy: "<tr>").dropFirst(2)
        #expect(rows.count == HTMLExport.slowestEventCount)
        let durations = rows.compactMap { row -> Double? in
            // The third cell: kind, name, duration.
            let cells = row.components(separatedBy: "</td>")
            guard cells.count > 2 else { return nil }
            let text = cells[2].drop { $0 != ">" }.dropFirst()
            return BudgetQuantity(parsing: String(text))?.value
        }
        #expect(durations.count == rows.count)
        #expect(durations == durations.sorted(by: >))
        #expect(abs((durations.first ?? 0) - 712.5) < 1, "the fatal hang, 712.5 ms, is the longest event")
        #expect(rows.first?.contains("<td>fatal</td>") == true)
    }

    /// A slow span's `detail` (a request's path, privacy-filtered when the line was written) is
    /// the last column: which call was slow, not only which name.
    @Test func slowestEventsShowTheirDetail() throws {
        let slowest = HTMLStructure.section("slowest", in: try HTMLFixture.page())
        #expect(slowest.contains("<th>Site / culprit</th><th>Detail</th></tr>"), "\(slowest)")
        let rows = slowest.components(separatedBy: "<tr>").dropFirst(2)
        let spanRows = rows.filter { $0.contains("kind-span") }
        #expect(!spanRows.isEmpty)
        for row in spanRows {
            let name = row.components(separatedBy: "</td>")[1].drop { $0 != ">" }.dropFirst()
            #expect(row.contains("</td><td>/v1/\(name)/"), "\(row)")
        }
        #expect(rows.first?.contains("<td>–</td></tr>") == true, "a hang has no detail")
    }

    @Test func hangCulpritsAreTabulated() throws {
        let hangs = HTMLStructure.section("hangs", in: try HTMLFixture.page())
        #expect(
            hangs.contains(
                "<td><span title=\"static Service.parseFeed&#40;) -&gt; &#40;)\">Service.parseFeed&#40;)</span></td>"
                    + "<td class=\"num\">2</td>"))
        #expect(hangs.contains("2 hangs &#40;1 fatal, 0 suppressed)"))
        #expect(HTMLStructure.occurrences(of: "<svg class=\"histogram\"", in: hangs) == 1)
    }

    @Test func hostileReportStringsStayInertText() throws {
        let page = try HTMLFixture.page(HTMLFixture.Shape(spansPerSession: 60, hostile: true))
        let lowered = page.lowercased()
        for forbidden in ["<script", "http://", "https://", "url(", "@import", "src=", "href=", "onerror="] {
            #expect(!lowered.contains(forbidden), "page contains \(forbidden)")
        }
        #expect(HTMLStructure.problems(page) == [])
        #expect(page.contains("&lt;script&gt;alert&#40;1)&lt;/script&gt;"))
        #expect(page.contains("&quot;&amp;&apos;&lt;&gt;"))
        // Controls and noncharacters are HTML5 parse errors: none may reach the page.
        let forbidden = page.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0.value & 0xFFFE == 0xFFFE
        }
        #expect(forbidden.isEmpty, "control characters in the page: \(forbidden.map(\.value))")
        // 20 KB names are cut: the page stays small however long the report's strings are.
        #expect(page.utf8.count < 1_500_000, "page is \(page.utf8.count) bytes")
        #expect(!page.contains(String(repeating: "long·", count: 200)))
    }

    @Test func reportWithoutIntervalsStillShowsHistogramsAndSaysWhy() throws {
        let page = try HTMLFixture.page(HTMLFixture.Shape(intervals: false))
        let timeline = HTMLStructure.section("timeline", in: page)
        #expect(timeline.contains("No span intervals in this report; histograms only."))
        #expect(!page.contains("<svg class=\"timeline\""))
        #expect(HTMLStructure.occurrences(of: "<svg class=\"histogram\"", in: page) == 5)
        #expect(HTMLStructure.section("slowest", in: page).contains("<tr>"))
        #expect(HTMLStructure.problems(page) == [])
    }

    @Test func emptyReportRendersAPageThatSaysSo() throws {
        let bytes = Array(#"{"schema":"perf-report","schemaVersion":1,"sessions":[],"spans":{}}"#.utf8)
        let page = String(
            decoding: HTMLExport.render(try ExportInput(bytes: bytes, path: "empty.json")), as: UTF8.self)
        #expect(HTMLStructure.problems(page) == [])
        for notice in [
            "No sessions in this report.", "No span intervals in this report", "No spans in this report.",
            "No slow spans or hangs in the ledger.", "No hang culprits in this report.",
        ] {
            #expect(page.contains(notice))
        }
        #expect(page.contains("generated at an unknown time"))
    }

    @Test func sameReportGivesTheSameBytes() throws {
        let bytes = try HTMLFixture.bytes(HTMLFixture.report())
        let first = HTMLExport.render(try ExportInput(bytes: bytes, path: "a/performance-report.json"))
        let second = HTMLExport.render(try ExportInput(bytes: bytes, path: "b/performance-report.json"))
        #expect(first == second)
    }

    @Test func smallReportMatchesTheGoldenPage() throws {
        let golden = TestFixtures.folder("html").appendingPathComponent("golden.html")
        let bytes = HTMLExport.render(try HTMLFixture.input(HTMLFixture.Shape(spansPerSession: 12)))
        if ProcessInfo.processInfo.environment["PERF_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(
                at: golden.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: golden)
        }
        let expected = try [UInt8](Data(contentsOf: golden))
        #expect(bytes == expected, "page differs from \(golden.path); if intended, rerun with PERF_UPDATE_GOLDEN=1")
    }

    @Test func mutatedReportsNeverCrashTheExporter() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let report = HTMLFixture.report(HTMLFixture.Shape(spansPerSession: 20))
        let bytes = try HTMLFixture.bytes(report)
        var rendered = 0
        for round in 0..<300 {
            // Byte flips mostly test the JSON reader; value swaps reach the exporter with extremes.
            let mutated =
                round % 2 == 0
                ? ReportFuzzTests.mutate(bytes, using: &random)
                : try HTMLFixture.bytes(Self.mutateValues(report, using: &random) as? [String: Any] ?? [:])
            guard let input = try? ExportInput(bytes: mutated, path: "fuzz.json") else { continue }
            let page = String(decoding: HTMLExport.render(input), as: UTF8.self)
            #expect(page.hasPrefix("<!doctype html>") && HTMLStructure.problems(page).isEmpty, "seed \(seed)")
            rendered += 1
        }
        #expect(rendered > 120, "seed \(seed)")
    }

    /// Values a damaged or hostile report could hold where the exporter expects something sane.
    static var extremes: [Any] {
        [
            1e300, -1e300, 9.2e18, -9.2e18, 8.9e12, 0, -1, 0.5, "", "<script>", NSNull(), [Any](), [String: Any](),
            true,
            "9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00.000Z", Int64.max, Int64.min,
            String(repeating: "x", count: 999),
        ]
    }

    /// Swaps about one value in twenty for an extreme and drops about one key in forty.
    static func mutateValues(_ value: Any, using random: inout SeededRandom) -> Any {
        switch value {
        case let object as [String: Any]:
            var copy: [String: Any] = [:]
            for key in object.keys.sorted() where Int.random(in: 0..<40, using: &random) != 0 {
                copy[key] =
                    key == "schema" || key == "schemaVersion" ? object[key] : mutateValues(object[key]!, using: &random)
            }
            return copy
        case let array as [Any]:
            return array.map { mutateValues($0, using: &random) }
        default:
            guard Int.random(in: 0..<20, using: &random) == 0 else { return value }
            return extremes.randomElement(using: &random)!
        }
    }

    /// Writes the fixture pages (full, hostile, without intervals, empty) into the directory
    /// `PERF_HTML_OUT` names, for scripts/validate/html.sh to render in Chromium; else into a
    /// temporary directory. Each reads back as written.
    @Test func fixturePagesAreWrittenForTheBrowserCheck() throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = URL(
            fileURLWithPath: environment["PERF_HTML_OUT"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("perf-html-\(getpid())").path)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if environment["PERF_HTML_OUT"] == nil { try? FileManager.default.removeItem(at: directory) } }
        let empty = Array(#"{"schema":"perf-report","schemaVersion":1,"sessions":[],"spans":{}}"#.utf8)
        let pages = [
            ("fixture", try HTMLFixture.input()),
            ("hostile", try HTMLFixture.input(HTMLFixture.Shape(spansPerSession: 60, hostile: true))),
            ("old-report", try HTMLFixture.input(HTMLFixture.Shape(intervals: false))),
            ("empty", try ExportInput(bytes: empty, path: "empty.json")),
        ]
        for (name, input) in pages {
            let url = directory.appendingPathComponent(name + ".html")
            let bytes = HTMLExport.render(input)
            try Data(bytes).write(to: url)
            #expect(try [UInt8](Data(contentsOf: url)) == bytes)
        }
    }

    static func attribute(_ name: String, in markup: String) -> String {
        guard let start = markup.range(of: " \(name)=\"") else { return "" }
        return String(markup[start.upperBound...].prefix { $0 != "\"" })
    }
}

/// The spans table shows failed ends beside the over-budget ones, whatever their duration.
@Suite struct ExportHTMLFailedTests {
    @Test func theSpansTableShowsFailuresAndTheirShare() throws {
        var span = PerformanceReport.Span(count: 900, maxMs: 2, p50Ms: 1, p95Ms: 1, p99Ms: 2, budgetMs: 60_000)
        span.exits = ["failure": 450]
        let page = String(
            decoding: HTMLExport.render(
                ExportInput(report: PerformanceReport(spans: ["db.fails": span]), path: "f.json")),
            as: UTF8.self)
        #expect(page.contains(">Failed</th>"))
        #expect(page.contains("450 · 50.0 %"), "the failures and their share of the 900 calls")
    }
}
