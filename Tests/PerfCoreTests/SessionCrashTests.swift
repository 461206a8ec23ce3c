// Crash recovery against a real child process killed by SIGKILL mid-session.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite(.serialized) struct SessionCrashTests {
    @Test func aSigkilledSessionIsRecoveredAsCrashedEveryTime() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        for round in 0..<10 {
            let id = SessionInfo.randomID()
            let child = try SessionChild.start(directory: scratch.url, sessionID: id)
            #expect(child.kill() == SIGKILL, "round \(round)")

            let store = SessionStore(directory: scratch.url)
            let recovered = SessionSamples.recoverSettled(store)
            try #require(recovered.count == 1, "round \(round): \(recovered)")
            let session = recovered[0]
            #expect(session.id == id, "round \(round)")
            #expect(session.status == .crashed, "round \(round)")
            #expect(session.info?.app.name == "perf-test-child", "round \(round)")
            #expect(session.info?.pid == child.process.pid, "round \(round)")
            #expect(session.orphanedSpans.map(\.name) == ["child.upload"], "round \(round)")
            #expect(session.orphanedSpans.first?.budgetNanos == 5_000_000_000, "round \(round)")
            #expect(session.orphanedSpans.first?.lifetime == "bounded", "round \(round)")
            #expect(session.fatalMarkers.count == 1, "round \(round)")
            #expect(session.fatalMarkers.first?.kind == "hang", "round \(round)")
            #expect(session.fatalMarkers.first?.lastKnownDurationNanos == 1_500_000_000, "round \(round)")
            #expect(session.fatalMarkers.first?.payload["culprit"] == "Child.block", "round \(round)")
            #expect(session.fatalMarkers.first?.payload["stack"] == "Child.block\nmain", "round \(round)")
            #expect(session.recoveryNote == nil, "round \(round)")
            try store.acknowledge(session)
            #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty, "round \(round)")
        }
    }

    @Test func aLiveChildSessionIsNotIngestedUntilItDies() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let id = SessionInfo.randomID()
        let child = try SessionChild.start(directory: scratch.url, sessionID: id)
        let whileAlive = SessionStore(directory: scratch.url).recoverPriorSessions()
        #expect(FileManager.default.fileExists(atPath: scratch.sessions.appendingPathComponent(id).path))
        _ = child.kill()
        #expect(whileAlive.isEmpty)
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().map(\.id) == [id])
    }
}
