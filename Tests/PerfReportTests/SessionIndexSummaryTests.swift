// The summary and the html page of a directory whose ledger rotated away every session line: the
// sessions still show when they started and ended (from the session index), and how many were
// live at once.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct SessionIndexSummaryTests {
    /// 2026-12-02T12:00:00.000Z.
    static let t0: Int64 = 1_796_212_800_000

    /// Two overlapping sessions ended through the session store; the ledger holds one span line.
    private func rotatedDirectory() throws -> (TemporaryDirectory, [UInt8]) {
        let directory = try TemporaryDirectory("index-summary")
        let first = SessionStore(directory: directory.url, clock: ManualClock(wallNanos: nanos(Self.t0 + 20_000)))
        let second = SessionStore(directory: directory.url, clock: ManualClock(wallNanos: nanos(Self.t0 + 30_000)))
        let a = try first.start(
            SessionInfo(id: "aaaa1111aaaa1111", pid: 11, startWallNanos: nanos(Self.t0), app: .init(name: "svc")))
        let b = try second.start(
            SessionInfo(
                id: "bbbb2222bbbb2222", pid: 12, startWallNanos: nanos(Self.t0 + 10_000), app: .init(name: "svc")))
        a.end()
        b.end()
        var span = LedgerEvent(kind: .span, name: "api.get", session: "bbbb2222bbbb2222", timestampMs: Self.t0 + 15_000)
        span.durationMs = 150
        span.budgetMs = 100
        var bytes: [UInt8] = []
        LedgerEncoder.encodeLine(span, into: &bytes)
        try Data(bytes).write(to: directory.file(LedgerWriter.fileName))
        return (directory, try ReportBuilder(directory: directory.url).build())
    }

    private func nanos(_ ms: Int64) -> UInt64 { UInt64(ms) * 1_000_000 }

    @Test func summaryTextAndJSONShowStartTimesAfterRotation() throws {
        let (directory, report) = try rotatedDirectory()
        defer { directory.remove() }
        let summary = try ReportSummary(bytes: report, path: "report.json")
        let text = summary.text
        #expect(text.contains("SESSIONS: 2 (0 active, 2 terminated, 0 crashed)"))
        #expect(text.contains("aaaa1111aaaa1111    terminated  2026-12-02T12:00:00.000Z  2026-12-02T12:00:20.000Z"))
        #expect(text.contains("bbbb2222bbbb2222    terminated  2026-12-02T12:00:10.000Z  2026-12-02T12:00:30.000Z"))
        #expect(text.contains("at most 2 live at once"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let sessions = try #require(object["sessions"] as? [[String: Any]])
        #expect(sessions.compactMap { $0["startedAt"] as? String }.count == 2)
        #expect(object["maxConcurrentSessions"] as? Int == 2)
    }

    @Test func htmlShowsStartTimesAfterRotation() throws {
        let (directory, report) = try rotatedDirectory()
        defer { directory.remove() }
        let page = String(
            decoding: HTMLExport.render(try ExportInput(bytes: report, path: "report.json")), as: UTF8.self)
        // The page escapes colons in text.
        #expect(page.contains("<td class=\"nowrap\">2026-12-02 12&#58;00&#58;00.000Z"))
        #expect(page.contains("<td class=\"nowrap\">2026-12-02 12&#58;00&#58;10.000Z"))
        #expect(page.contains("At most 2 sessions were live at once"))
    }
}
