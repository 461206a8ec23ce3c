// The report's sessions when the ledger lost their lines: start, end and status come from the
// session store's index, and the report says how many sessions were live at once.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

/// Data directories whose sessions are known from the session store and from ledger lines.
enum SessionIndexFixture {
    /// 2026-12-02T12:00:00.000Z.
    static let t0: Int64 = 1_796_212_800_000

    static func nanos(_ ms: Int64) -> UInt64 { UInt64(ms) * 1_000_000 }

    static func session(_ name: String, _ id: String, atMs: Int64) -> LedgerEvent {
        LedgerEvent(kind: .session, name: name, session: id, timestampMs: atMs)
    }

    /// Replaces the ledger with `lines` (as if rotation had dropped everything older).
    static func writeLedger(_ lines: [LedgerEvent], in directory: URL) throws {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(LedgerWriter.previousFileName))
        var bytes: [UInt8] = []
        for line in lines { LedgerEncoder.encodeLine(line, into: &bytes) }
        try Data(bytes).write(to: directory.appendingPathComponent(LedgerWriter.fileName))
    }

    /// The built report, as JSON objects (readable by a build without the newer keys).
    static func report(_ directory: URL) throws -> [String: Any] {
        let bytes = try ReportBuilder(directory: directory).build()
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func sessions(_ report: [String: Any]) -> [String: [String: Any]] {
        let list = report["sessions"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
    }
}

@Suite struct SessionIndexReportTests {
    typealias F = SessionIndexFixture

    @Test func aLedgerThatRotatedAwayEverySessionLineStillListsEverySessionFromTheIndex() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        var expected: [(id: String, start: Int64, end: Int64)] = []
        for index in 0..<3 {
            let start = F.t0 + Int64(index) * 60_000
            let id = "5e55\(index)0000000000a"
            // Each session's clock reads its end time when it ends.
            let store = SessionStore(directory: directory.url, clock: ManualClock(wallNanos: F.nanos(start + 30_000)))
            let session = try store.start(
                SessionInfo(id: id, pid: 100 + Int32(index), startWallNanos: F.nanos(start), app: .init(name: "svc")))
            session.end()
            expected.append((id, start, start + 30_000))
        }
        // Only one span line survives, of the middle session: every session line rotated away.
        var span = LedgerEvent(kind: .span, name: "api.get", session: expected[1].id, timestampMs: F.t0 + 70_000)
        span.durationMs = 120
        span.budgetMs = 100
        try F.writeLedger([span], in: directory.url)

        let report = try F.report(directory.url)
        let sessions = F.sessions(report)
        #expect(sessions.count == 3)
        for (index, session) in expected.enumerated() {
            let listed = try #require(sessions[session.id], "session \(index) is listed")
            #expect(listed["status"] as? String == "terminated")
            #expect(listed["startedAt"] as? String == LedgerTimestamp.string(ms: session.start))
            #expect(listed["endedAt"] as? String == LedgerTimestamp.string(ms: session.end))
            #expect(listed["pid"] as? Int == 100 + index)
        }
        #expect(report["maxConcurrentSessions"] as? Int == 1, "each ended before the next began")
    }

    @Test func theIndexFillsInWhatTheLedgerLostAndTheLedgerKeepsWhatItKnows() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        let clock = ManualClock(wallNanos: F.nanos(F.t0 + 5_000))
        let store = SessionStore(directory: directory.url, clock: clock)
        let id = "ab12ab12ab12ab12"
        let session = try store.start(
            SessionInfo(id: id, pid: 7, startWallNanos: F.nanos(F.t0), app: .init(name: "svc")))
        session.end()
        // The ledger kept the end line (written a little earlier than the index's end) only.
        try F.writeLedger([F.session("end", id, atMs: F.t0 + 4_990)], in: directory.url)
        let listed = try #require(F.sessions(try F.report(directory.url))[id])
        #expect(listed["startedAt"] as? String == LedgerTimestamp.string(ms: F.t0), "from the index")
        #expect(listed["endedAt"] as? String == LedgerTimestamp.string(ms: F.t0 + 4_990), "the ledger's line")
        #expect(listed["status"] as? String == "terminated")
    }

    @Test func maxConcurrentSessionsCountsOverlappingSessions() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        // A [0, 10 s], B [5 s, 15 s], C [7 s, 8 s]: all three live between 7 s and 8 s.
        try F.writeLedger(
            [
                F.session("start", "aaaa", atMs: F.t0), F.session("start", "bbbb", atMs: F.t0 + 5_000),
                F.session("start", "cccc", atMs: F.t0 + 7_000), F.session("end", "cccc", atMs: F.t0 + 8_000),
                F.session("end", "aaaa", atMs: F.t0 + 10_000), F.session("end", "bbbb", atMs: F.t0 + 15_000),
            ], in: directory.url)
        #expect(try F.report(directory.url)["maxConcurrentSessions"] as? Int == 3)
    }

    @Test func maxConcurrentSessionsOfDisjointSessionsIsOneEvenWhenOneStartsAsAnotherEnds() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        try F.writeLedger(
            [
                F.session("start", "aaaa", atMs: F.t0), F.session("end", "aaaa", atMs: F.t0 + 1_000),
                F.session("start", "bbbb", atMs: F.t0 + 2_000), F.session("end", "bbbb", atMs: F.t0 + 3_000),
                F.session("start", "cccc", atMs: F.t0 + 3_000), F.session("end", "cccc", atMs: F.t0 + 4_000),
            ], in: directory.url)
        #expect(try F.report(directory.url)["maxConcurrentSessions"] as? Int == 1)
    }

    @Test func anActiveSessionCountsUntilTheReportTime() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        // A never ended: it is live when B runs, so two were live at once.
        var span = LedgerEvent(kind: .span, name: "late", session: "aaaa", timestampMs: F.t0 + 60_000)
        span.durationMs = 1
        try F.writeLedger(
            [
                F.session("start", "aaaa", atMs: F.t0), F.session("start", "bbbb", atMs: F.t0 + 5_000),
                F.session("end", "bbbb", atMs: F.t0 + 6_000), span,
            ], in: directory.url)
        let report = try F.report(directory.url)
        #expect(report["maxConcurrentSessions"] as? Int == 2)
        #expect(F.sessions(report)["aaaa"]?["status"] as? String == "active")
    }

    @Test func aSIGKILLedChildIsCrashedAfterTheNextStartsRecoveryEvenOnceItsLedgerLinesRotatedAway() throws {
        let directory = try TemporaryDirectory("index-report")
        defer { directory.remove() }
        let child = try ChildProcess(
            executable: BuildProducts.testChild, arguments: ["facade", "open", directory.url.path])
        #expect(child.readLine(timeoutSeconds: 60) == "ready")
        child.killAndWait()
        let events = try LedgerReader(directory: directory.url).readAll().events
        let id = try #require(events.first { $0.kind == .session && $0.name == "start" }?.session)
        let startedMs = try #require(events.first { $0.kind == .session && $0.name == "start" }?.timestampMs)

        // The next start: recovery finds the journal without an end marker.
        let store = SessionStore(directory: directory.url)
        var recovered: [RecoveredSession] = []
        _ = pollUntil(seconds: 10) {
            recovered = store.recoverPriorSessions()
            return recovered.contains { $0.id == id }
        }
        let crashed = try #require(recovered.first { $0.id == id })
        #expect(crashed.status == .crashed)
        for session in recovered { try store.acknowledge(session) }
        // Then the ledger rotated: nothing of the child's lines is left.
        var span = LedgerEvent(kind: .span, name: "later", session: "0123456789abcdef", timestampMs: startedMs + 1)
        span.durationMs = 1
        try F.writeLedger([span], in: directory.url)

        let listed = try #require(F.sessions(try F.report(directory.url))[id])
        #expect(listed["status"] as? String == "crashed")
        #expect(listed["startedAt"] as? String == LedgerTimestamp.string(ms: startedMs))
        #expect(listed["pid"] as? Int == Int(child.pid))
    }
}
