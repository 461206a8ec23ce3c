// Reading a report back: the summary's tables and JSON, and every way a report file can be bad.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ReportSummaryTests {
    private func golden() throws -> [UInt8] { try [UInt8](Data(contentsOf: ReportFixture.golden)) }

    @Test func textShowsSpansByP95HangsWithCulpritsAndSessions() throws {
        let summary = try ReportSummary(bytes: golden(), path: "golden.json")
        #expect(zip(summary.spans, summary.spans.dropFirst()).allSatisfy { $0.p95Ms >= $1.p95Ms })
        let text = summary.text
        #expect(text.contains("myservice 1.4.0 (build 812)"))
        #expect(text.contains("HANGS: 2 (1 fatal, 1 suppressed)"))
        #expect(text.contains("MyService.Feed.parse()"))
        #expect(text.contains("SESSIONS: 3 (1 active, 1 terminated, 1 crashed)"))
        #expect(text.contains("db.query *"), "a ledger-only span is flagged")
    }

    @Test func jsonFormatIsVersionedAndParses() throws {
        let summary = try ReportSummary(bytes: golden(), path: "golden.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "perf-report-summary")
        #expect(object["schemaVersion"] as? Int == 1)
        #expect((object["spans"] as? [Any])?.count == summary.spans.count)
    }

    @Test(arguments: [
        ("", "the file is empty"),
        ("{\"schema\":\"perf-report\",\"schemaVer", "not valid JSON (truncated or corrupt)"),
        ("[1,2]", "not a performance report (not a JSON object)"),
        ("{\"spans\":{}}", "not a performance report (missing \"schema\")"),
        ("{\"schema\":\"other\"}", "not a performance report (schema is not \"perf-report\")"),
        ("{\"schema\":\"perf-report\",\"schemaVersion\":\"1\"}", "missing or invalid \"schemaVersion\""),
        ("{\"schema\":\"perf-report\",\"schemaVersion\":1,\"spans\":[]}", "\"spans\" is missing or has the wrong type"),
    ])
    func badReportsAreRejectedWithTheirProblem(text: String, problem: String) {
        #expect(throws: Perf.ReportError(.invalidReport, path: "x.json", problem)) {
            try ReportSummary(bytes: Array(text.utf8), path: "x.json")
        }
    }

    @Test func aNewerMajorVersionIsRejectedClearly() throws {
        var text = String(decoding: try golden(), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":2")
        do {
            _ = try ReportSummary(bytes: Array(text.utf8), path: "new.json")
            Issue.record("a schema 2 report was accepted")
        } catch {
            #expect(error.code == .newerSchema)
            #expect(
                error.description
                    == "cannot read report 'new.json': schemaVersion 2 is newer than this perf-report reads (1); use a newer perf-report"
            )
        }
    }

    @Test func aTruncatedReportIsRejected() throws {
        let bytes = try golden()
        #expect(throws: Perf.ReportError.self) {
            try ReportSummary(bytes: Array(bytes.prefix(bytes.count / 2)), path: "t.json")
        }
    }
}

/// Sub-millisecond figures in the summary: readable, never `0.0` for a span that took time.
@Suite struct ReportSummaryPrecisionTests {
    @Test(arguments: [
        (0.0, "0.0"), (1234.56, "1234.6"), (1.0, "1.0"), (0.5, "0.5"), (0.025, "0.025"), (0.000025, "0.000025"),
        (0.000512, "0.000512"), (0.123456, "0.123"), (0.9999, "1"),
    ])
    func millisecondColumnsKeepThreeSignificantDigitsBelowOneMs(ms: Double, text: String) {
        #expect(ReportSummary.milliseconds(ms) == text)
    }

    @Test func aNanosecondSpanShowsItsFigures() throws {
        let report = PerformanceReport(spans: [
            "tiny": .init(count: 100, maxMs: 0.000031, p50Ms: 0.000025, p95Ms: 0.000025, p99Ms: 0.000031)
        ])
        let summary = ReportSummary(report: report, path: "tiny.json")
        let row = try #require(summary.text.split(separator: "\n").first { $0.hasPrefix("  tiny") })
        let cells = row.split(separator: " ").map(String.init)
        #expect(cells == ["tiny", "100", "0.000025", "0.000025", "0.000031", "0.000031", "-", "0", "0"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let span = try #require((object["spans"] as? [[String: Any]])?.first)
        #expect(span["p50Ms"] as? Double == 0.000025)
        #expect(summary.json.contains("\"p50Ms\":0.000025,"), "plain decimal, not 2.5e-05")
    }
}

/// What the report knows beyond spans and hangs: hitches, notes and the input's damage.
@Suite struct ReportSummaryLedgerTests {
    static func event(_ kind: PerformanceReport.Event.Kind, _ name: String, atMs: Int64) -> PerformanceReport.Event {
        PerformanceReport.Event(
            kind: kind, name: name, session: "s1", timestamp: PerformanceReport.Timestamp(unixMs: atMs))
    }

    @Test func theGoldenSummaryShowsItsDamagedLinesHitchAndNote() throws {
        let summary = try ReportSummary(contentsOf: ReportFixture.golden)
        #expect(summary.input.malformedLines == 1 && summary.input.tornTail == 1 && summary.input.unknownKinds == 1)
        #expect(summary.input.invalidPayloads == 1 && summary.input.diagnosticPayloads == 4)
        #expect(summary.hitches == [.init(target: "main", count: 1, suppressed: 0, maxMs: 150)])
        #expect(summary.notes == [.init(name: "socket.reconnect", count: 1, suppressed: 0)])
        let text = summary.text
        #expect(text.contains("HITCHES: 1 (0 suppressed), max 150.0 ms\n"), "\(text)")
        #expect(text.contains("NOTES: 1 (0 more held back by the note floor)\n"), "\(text)")
        #expect(text.contains("socket.reconnect"))
        #expect(
            text.contains(
                "INPUT: 18 ledger lines (1 malformed, 1 torn tail, 1 of an unknown kind), 4 diagnostic payloads (1 unreadable)"
                    + "\nLOST: 4 ledger lines dropped (backlog: 4)\n"
            ), "\(text)")
        #expect(summary.input.droppedLines == ["backlog": 4])
    }

    @Test func notesSumWhatTheFloorHeldBackAndHitchesCountSuppressedApart() throws {
        var events: [PerformanceReport.Event] = []
        for (index, held) in [0, 7, 5].enumerated() {
            var note = Self.event(.note, "cache.miss", atMs: 1_000 + Int64(index))
            if held > 0 { note.extra["suppressedCount"] = .int(Int64(held)) }
            events.append(note)
        }
        events.append(Self.event(.note, "socket.reconnect", atMs: 2_000))
        for (index, ms) in [130.0, 180.5, 400].enumerated() {
            var hitch = Self.event(.hitch, "main", atMs: 3_000 + Int64(index))
            hitch.durationMs = ms
            if ms == 400 { hitch.suppressed = "debugger" }
            events.append(hitch)
        }
        var worker = Self.event(.hitch, "worker", atMs: 4_000)
        worker.durationMs = 125
        events.append(worker)
        let report = PerformanceReport(
            ledger: .init(events: events, malformedLines: 2), input: .init(ledgerEvents: 20),
            truncated: .init(ledgerEventsOmitted: 12))
        let summary = ReportSummary(report: report, path: "r.json")
        #expect(
            summary.notes == [
                .init(name: "cache.miss", count: 3, suppressed: 12),
                .init(name: "socket.reconnect", count: 1, suppressed: 0),
            ])
        #expect(
            summary.hitches == [
                .init(target: "main", count: 2, suppressed: 1, maxMs: 180.5),
                .init(target: "worker", count: 1, suppressed: 0, maxMs: 125),
            ])
        let text = summary.text
        #expect(text.contains("HITCHES: 3 (1 suppressed), max 180.5 ms in the newest 8 of 20 ledger lines"), "\(text)")
        #expect(text.contains("NOTES: 4 (12 more held back by the note floor) in the newest 8 of 20 ledger lines"))
        #expect(text.contains("INPUT: 20 ledger lines (2 malformed, 0 torn tail, 0 of an unknown kind)"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let notes = try #require(object["notes"] as? [[String: Any]])
        #expect(notes.first?["suppressed"] as? Int == 12)
        let input = try #require(object["input"] as? [String: Any])
        #expect(input["malformedLines"] as? Int == 2 && input["keptEvents"] as? Int == 8)
        #expect((object["hitches"] as? [[String: Any]])?.count == 2)
    }

    /// 500 notes in a burst, then shutdown: the note line and the line with the count the floor
    /// held back (`count` 0). The second is no note: counting it would count the burst twice.
    @Test func aLineThatOnlyCarriesTheHeldBackCountIsNoNote() throws {
        var heldBack = Self.event(.note, "db.error", atMs: 2_000)
        heldBack.count = 0
        heldBack.extra["suppressedCount"] = .int(499)
        let events = [Self.event(.note, "db.error", atMs: 1_000), heldBack]
        let summary = ReportSummary(report: PerformanceReport(ledger: .init(events: events)), path: "r.json")
        #expect(summary.notes == [.init(name: "db.error", count: 1, suppressed: 499)])
        let text = summary.text
        #expect(text.contains("NOTES: 1 (499 more held back by the note floor)\n"), "\(text)")
        #expect(text.contains("  db.error" + String(repeating: " ", count: 32) + "      1         499\n"), "\(text)")
    }

    @Test func aReportWithoutHitchesOrNotesSaysNone() {
        let summary = ReportSummary(report: PerformanceReport(), path: "empty.json")
        #expect(summary.text.contains("HITCHES: 0 (0 suppressed), max 0.0 ms\n"))
        #expect(summary.text.contains("NOTES: 0 (0 more held back by the note floor)\n"))
        #expect(summary.text.contains("INPUT: 0 ledger lines"))
    }
}

/// OVER and FAILED come from the report's counts, not the ledger lines it still holds.
@Suite struct ReportSummaryCountsTests {
    static func report() -> PerformanceReport {
        var fails = PerformanceReport.Span(count: 900, maxMs: 2, p50Ms: 1, p95Ms: 1, p99Ms: 2, budgetMs: 60_000)
        fails.exits = ["failure": 450]
        fails.overBudgetLines = 0
        var capped = PerformanceReport.Span(
            count: 2_000, maxMs: 3, p50Ms: 1, p95Ms: 2, p99Ms: 3, budgetMs: 0, overBudget: 2_000)
        capped.overBudgetLines = 133
        return PerformanceReport(spans: ["db.fails": fails, "api.capped": capped])
    }

    @Test func failedEndsAndTheirShareShowInTheFailedColumn() throws {
        let summary = ReportSummary(report: Self.report(), path: "counts.json")
        let row = try #require(summary.text.split(separator: "\n").first { $0.hasPrefix("  db.fails") })
        #expect(row.hasSuffix("450 (50.0 %)"), "\(row)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let span = try #require((json["spans"] as? [[String: Any]])?.first { $0["name"] as? String == "db.fails" })
        #expect((span["exits"] as? [String: Int])?["failure"] == 450)
    }

    @Test func overCountsEveryEndAndSaysHowManyLinesTheLedgerHolds() throws {
        let summary = ReportSummary(report: Self.report(), path: "counts.json")
        let text = summary.text
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("  api.capped") })
        #expect(row.split(separator: " ").map(String.init).suffix(2) == ["2000", "0"], "\(row)")
        #expect(text.contains("OVER counts every end over budget; the ledger still holds 133 of their 2000 lines"))
    }
}

/// The slowest span lines with their `detail`, which only the ledger held before.
@Suite struct ReportSummarySlowestTests {
    @Test func theGoldenSummaryListsItsSpanLinesLongestFirstWithTheirDetail() throws {
        let summary = try ReportSummary(contentsOf: ReportFixture.golden)
        #expect(summary.slowest.map(\.durationMs) == [45000, 2100.25, 1500, 1234.5, 75.125])
        #expect(summary.spanLines == 5, "the orphan without a duration is not among them")
        let text = summary.text
        let expected = [
            "SLOWEST: 5 span lines, longest first",
            "  NAME                                         MS  BUDGET ms  EXIT       DETAIL",
            "  db.migrate                             ≥45000.0    10000.0  orphaned   -",
            "  api.get                                  2100.2     1000.0  success    -",
            "  api.get                                  1500.0     1000.0  failure    -",
            "  api.get                                  1234.5     1000.0  success    /v1/threads",
            "  db.query                                   75.1       50.0  success    -",
        ].joined(separator: "\n")
        #expect(text.contains("\n\n" + expected + "\n\nHANGS: "), "\(text)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let rows = try #require(object["slowest"] as? [[String: Any]])
        #expect(rows.count == 5 && object["spanLines"] as? Int == 5)
        #expect(
            rows[3]["detail"] as? String == "/v1/threads" && rows[3]["endedAt"] as? String == "2026-12-02T12:00:05.000Z"
        )
        #expect(rows[0]["detail"] is NSNull && rows[0]["exit"] as? String == "orphaned")
    }

    @Test func theListIsBoundedAndSaysOfHowMany() throws {
        var report = PerformanceReport()
        for index in 0..<25 {
            var event = PerformanceReport.Event(
                kind: .span, name: "api.get", session: "s1",
                timestamp: PerformanceReport.Timestamp(unixMs: 1_000 + Int64(index)))
            event.durationMs = Double(index)
            event.detail = "/v1/items/\(index)\n\u{1B}[2J" + String(repeating: "x", count: 100)
            report.ledger.events.append(event)
        }
        let summary = ReportSummary(report: report, path: "r.json")
        #expect(summary.slowest.count == ReportSummary.slowestCount)
        #expect(summary.slowest.first?.durationMs == 24)
        let text = summary.text
        #expect(text.contains("SLOWEST: the 10 longest of 25 span lines, longest first\n"), "\(text)")
        let row = try #require(text.split(separator: "\n").first { $0.contains("/v1/items/24") })
        #expect(!row.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{7F}" }, "no control characters: \(row)")
        let detail = try #require(row.range(of: "/v1/items/24").map { row[$0.lowerBound...] })
        #expect(detail.hasSuffix("…") && detail.count == 80, "\(row)")
    }

    @Test func aReportWithoutSpanLinesSaysSo() {
        #expect(
            ReportSummary(report: PerformanceReport(), path: "r.json").text.contains(
                "\nSLOWEST: 0 span lines, longest first\n\nHANGS: "))
    }
}

/// A ledger handed where a report belongs is told by its first line or its name.
@Suite struct ReportSummaryLedgerInputTests {
    static let ledgerLine = #"{"kind":"span","name":"api.get","session":"s1","ts":"2026-12-02T12:00:05.000Z","v":1}"#

    @Test(arguments: [
        // Several lines: not one JSON document.
        (ledgerLine + "\n" + ledgerLine + "\n", "data/events.log", "data"),
        // One line: an object, but no report.
        (ledgerLine + "\n", "events.log", "."),
        // Named like a ledger, whatever its first line.
        (#"{"v":1,"ts":"2026-12"#, "/srv/app/perf-events.jsonl", "/srv/app"),
        ("garbage\n", "/perf-events.jsonl.prev", "/"),
    ])
    func aLedgerIsToldWithTheBuildCommand(text: String, path: String, directory: String) {
        let problem =
            "a Perf ledger (one event per line), not a performance report; build the report from its data "
            + "directory: perf-report build --dir \(directory)"
        #expect(throws: Perf.ReportError(.invalidReport, path: path, problem)) {
            try ReportSummary(bytes: Array(text.utf8), path: path)
        }
    }

    @Test(arguments: [
        (#"{"v":1,"ts":"2026-12"#, "not valid JSON (truncated or corrupt)"),
        (#"{"kind":"span","v":1}"#, "not a performance report (missing \"schema\")"),
    ])
    func somethingElseKeepsItsProblem(text: String, problem: String) {
        #expect(throws: Perf.ReportError(.invalidReport, path: "x.json", problem)) {
            try ReportSummary(bytes: Array(text.utf8), path: "x.json")
        }

    }
}
