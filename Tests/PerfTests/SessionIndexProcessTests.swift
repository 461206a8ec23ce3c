// Several processes, one data directory: every cleanly ended session reads `terminated` with its
// start and end, however much the ledger rotated under them, and the report counts them live at once.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SessionIndexProcessTests {
    @Test func fourProcessesSharingADirectoryAllShowTerminatedWithStartAndEnd() throws {
        let directory = try TemporaryDirectory("index-processes")
        defer { directory.remove() }
        // An 8 KiB ledger and 300 over-budget spans per child before and after the rendezvous:
        // the ledger rotates many times, so the start lines are long gone.
        let children = try (0..<4).map { _ in
            try ChildProcess(
                executable: BuildProducts.testChild, arguments: ["sessions", directory.url.path, "8192", "300"],
                withStandardInput: true)
        }
        // Every child is live (installed, ready) before any is told to finish.
        for child in children { #expect(child.readLine(timeoutSeconds: 120) == "ready") }
        for child in children { child.closeStandardInput() }
        for child in children {
            #expect(child.readLine(timeoutSeconds: 120) == "done")
            #expect(ChildProcess.exitedNormally(child.wait()) && ChildProcess.exitCode(child.wait()) == 0)
        }

        let report = try SessionIndexFixture.report(directory.url)
        let sessions = report["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 4)
        for session in sessions {
            let id = session["id"] as? String ?? "?"
            #expect(session["status"] as? String == "terminated", "session \(id)")
            #expect(session["startedAt"] is String, "session \(id) has its start")
            #expect(session["endedAt"] is String, "session \(id) has its end")
        }
        #expect(Set(sessions.compactMap { $0["pid"] as? Int }) == Set(children.map { Int($0.pid) }))
        #expect(report["maxConcurrentSessions"] as? Int == 4, "all four were live at the rendezvous")
        // Each child's shutdown payload holds its 600 calls: merged per session and name, as one
        // process's would be, whatever the ledger lost.
        let work = (report["spans"] as? [String: [String: Any]])?["child.work"]
        #expect(work?["count"] as? Int == 4 * 600)
        #expect(work?["source"] as? String == "histogram")
    }
}

extension PerfGlobalStateTests {
    @Suite struct SessionIndexInstallTests {
        @Test func oneProcessWhoseLedgerRotatedStillReportsWhenItsSessionStarted() throws {
            let directory = try TemporaryDirectory("index-install")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "rotating"), recording: .enabled,
                ledgerCapBytes: 4096)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            let id = try #require(Perf.sessionID)
            for sequence in 0..<200 { Perf.begin("rotate.me", slowMs: 0).end(count: sequence) }
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(!events.contains { $0.kind == .session && $0.name == "start" }, "the start line rotated away")

            let listed = try #require(SessionIndexFixture.sessions(try SessionIndexFixture.report(directory.url))[id])
            #expect(listed["startedAt"] is String)
            #expect(listed["endedAt"] is String)
            #expect(listed["status"] as? String == "terminated")
        }
    }
}
