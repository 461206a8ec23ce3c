// The report of the hand-made fixture directory, byte for byte, and what it must say.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReportGoldenTests {
    @Test func fixtureReportMatchesTheGoldenFile() throws {
        let bytes = try ReportBuilder(directory: ReportFixture.data).build()
        if ProcessInfo.processInfo.environment["PERF_UPDATE_GOLDEN"] == "1" {
            try Data(bytes).write(to: ReportFixture.golden)
        }
        let golden = try [UInt8](Data(contentsOf: ReportFixture.golden))
        let identical = bytes == golden
        #expect(
            identical,
            "report differs from \(ReportFixture.golden.path); if the change is intended, rerun with PERF_UPDATE_GOLDEN=1"
        )
    }

    @Test func fixtureReportTellsTheStoryOfTheCrash() throws {
        let bytes = try ReportBuilder(directory: ReportFixture.data).build()
        let report = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(report["schema"] as? String == "perf-report")
        #expect(report["schemaVersion"] as? Int == 1)
        #expect(report["truncated"] is NSNull)
        let sessions = try #require(report["sessions"] as? [[String: Any]])
        let status = Dictionary(
            uniqueKeysWithValues: sessions.map { ($0["id"] as? String ?? "", $0["status"] as? String ?? "") })
        #expect(
            status == ["a1a1a1a1a1a1a1a1": "crashed", "b2b2b2b2b2b2b2b2": "terminated", "c3c3c3c3c3c3c3c3": "active"])
        let hangs = try #require(report["hangs"] as? [String: Any])
        #expect(hangs["count"] as? Int == 2)
        #expect(hangs["fatal"] as? Int == 1)
        #expect(hangs["suppressed"] as? Int == 1)
        let culprits = try #require(hangs["culprits"] as? [[String: Any]])
        #expect(
            Set(culprits.compactMap { $0["culprit"] as? String }) == [
                "MyService.Store.compact()", "MyService.Feed.parse()",
            ])
        let spans = try #require(report["spans"] as? [String: [String: Any]])
        // B's newest payload (50 calls) merged with C's (10); B's older payload is not counted
        // again. A crashed without a payload: its one ledger line counts, as do its over-budget
        // lines, so the three over budget (A's one, B's two) are among the 61 calls.
        #expect(spans["api.get"]?["count"] as? Int == 61)
        #expect(spans["api.get"]?["overBudget"] as? Int == 3)
        #expect(spans["api.get"]?["ledgerOnlySessions"] as? Int == 1)
        #expect(spans["api.get"]?["source"] as? String == "histogram")
        // A's spans left open: one for an unknown time, one for at least 45 s.
        #expect(spans["sync.upload"]?["orphaned"] as? Int == 1)
        #expect(spans["sync.upload"]?["orphanedLowerMs"] == nil)
        #expect(spans["db.migrate"]?["orphaned"] as? Int == 1)
        #expect(spans["db.migrate"]?["orphanedLowerMs"] as? Double == 45_000)
        #expect(spans["api.get"]?["sites"] as? [String] == ["MyService/API.swift:88", "MyService/API.swift:90"])
        #expect(spans["db.query"]?["source"] as? String == "ledger")
        #expect(spans["sync.upload"]?["source"] as? String == "ledger")
        let ledger = try #require(report["ledger"] as? [String: Any])
        #expect(ledger["malformedLines"] as? Int == 1)
        #expect(ledger["tornTail"] as? Int == 1)
        #expect(ledger["unknownKinds"] as? Int == 1)
        let events = try #require(ledger["events"] as? [[String: Any]])
        #expect(events.first?["ts"] as? String == "2026-12-02T12:00:00.000Z", "the .prev file comes first")
        let input = try #require(report["input"] as? [String: Any])
        #expect(input["invalidPayloads"] as? Int == 1)
        let diagnostics = try #require(report["diagnostics"] as? [[String: Any]])
        #expect(
            diagnostics.compactMap { $0["takenAt"] as? String } == [
                "2026-12-02T14:10:00.000Z", "2026-12-02T13:10:00.000Z", "2026-12-02T13:05:00.000Z",
            ])
    }

    @Test func twoBuildsGiveTheSameBytesAndNeverMutateTheDirectory() throws {
        let copy = try ReportFixture.copy()
        defer { copy.remove() }
        let before = try ReportFixture.fingerprint(copy.url)
        let first = try ReportBuilder(directory: copy.url).build()
        let second = try ReportBuilder(directory: copy.url).build()
        #expect(first == second)
        #expect(try ReportFixture.fingerprint(copy.url) == before)
    }

    @Test func aSmallCapKeepsTheReportUnderItAndSaysWhatWasLeftOut() throws {
        let cap = 6 * 1024
        let bytes = try ReportBuilder(directory: ReportFixture.data, capBytes: cap).build()
        #expect(bytes.count <= cap)
        let full = try ReportBuilder(directory: ReportFixture.data).build()
        #expect(full.count > cap, "the fixture must exceed the small cap for this test to mean anything")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let truncated = try #require(report["truncated"] as? [String: Any])
        let omitted = ["diagnosticsOmitted", "ledgerEventsOmitted", "spansOmitted", "sessionsOmitted"]
            .compactMap { truncated[$0] as? Int }.reduce(0, +)
        #expect(omitted > 0)
    }
}
