// Recovery of prior sessions in one process: terminated, crashed, acknowledge, locks, corruption.
import Foundation
import JournalKit
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SessionRecoveryTests {
    @Test(arguments: [Journal.Durability.processDeath, .fsync])
    func cleanShutdownIsReportedAsTerminated(durability: Journal.Durability) throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        let clock = ManualClock(wallNanos: info.startWallNanos)
        let session = try SessionStore(directory: scratch.url, durability: durability, clock: clock).start(info)
        session.spanBegan(SessionSamples.span(id: 1))
        session.spanClosed(id: 1)
        clock.advance(byMilliseconds: 1500)
        session.end()
        #expect(session.failureCount == 0)
        #expect(session.isEnded)

        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        try #require(recovered.count == 1)
        #expect(recovered[0].id == info.id)
        #expect(recovered[0].info == info)
        #expect(recovered[0].status == .terminated(endWallNanos: info.startWallNanos + 1_500_000_000))
        #expect(recovered[0].orphanedSpans.isEmpty)
        #expect(recovered[0].fatalMarkers.isEmpty)
        #expect(recovered[0].recoveryNote == nil)
    }

    @Test func crashedSessionReportsOrphanedSpansAndFatalMarkers() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        try startAndAbandon(info, in: scratch) { session in
            session.spanBegan(SessionSamples.span(id: 1))
            session.spanBegan(SessionSamples.span(id: 2, name: "closed.span"))
            session.spanClosed(id: 2)
            session.setOngoing(SessionSamples.marker(id: 7, durationNanos: 1_000_000_000))
            session.setOngoing(SessionSamples.marker(id: 7, durationNanos: 2_500_000_000))
            session.setOngoing(SessionSamples.marker(id: 8, durationNanos: 1_000_000_000))
            session.clearOngoing(id: 8)
        }

        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        try #require(recovered.count == 1)
        #expect(recovered[0].status == .crashed)
        #expect(recovered[0].info == info)
        #expect(recovered[0].orphanedSpans == [SessionSamples.span(id: 1)])
        // The last update wins: its duration and payload are what the crash report shows.
        #expect(recovered[0].fatalMarkers == [SessionSamples.marker(id: 7, durationNanos: 2_500_000_000)])
        #expect(recovered[0].recoveryNote == nil)
    }

    @Test func acknowledgingDeletesAndASecondRecoveryFindsNothing() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let crashed = SessionSamples.info(start: 1)
        try startAndAbandon(crashed, in: scratch) { $0.spanBegan(SessionSamples.span(id: 1)) }
        let ended = SessionSamples.info(start: 2)
        try SessionStore(directory: scratch.url).start(ended).end()

        let store = SessionStore(directory: scratch.url)
        let first = SessionSamples.recoverSettled(store, count: 2)
        #expect(first.map(\.id) == [crashed.id, ended.id])
        // Not acknowledged yet: the same store reports the same sessions again, no more.
        #expect(store.recoverPriorSessions() == first)
        for session in first { try store.acknowledge(session) }

        #expect(!FileManager.default.fileExists(atPath: scratch.sessions.appendingPathComponent(crashed.id).path))
        // Journals and locks are gone; each session's index record stays, now final.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.sessions.path).sorted()
                == [crashed.id, ended.id].map { $0 + SessionIndex.suffix }.sorted())
        #expect(store.recoverPriorSessions().isEmpty)
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
        // Acknowledging again is harmless.
        try store.acknowledge(first[0])
    }

    @Test func aSessionRecoveredByOneStoreIsSkippedByAnotherUntilAcknowledged() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        try startAndAbandon(SessionSamples.info(), in: scratch) { $0.spanBegan(SessionSamples.span(id: 1)) }
        let first = SessionStore(directory: scratch.url)
        let recovered = SessionSamples.recoverSettled(first)
        #expect(recovered.count == 1)
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
        try first.acknowledge(recovered[0])
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
    }

    @Test func aLiveSessionIsNotIngested() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let live = try SessionStore(directory: scratch.url).start(SessionSamples.info())
        live.spanBegan(SessionSamples.span(id: 1))
        // flock conflicts between open descriptions, so another store in this process stands in
        // for another process (the child-process version is in SessionCrashTests).
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
        live.end()
        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        #expect(recovered.map(\.id) == [live.info.id])
    }

    @Test func startingAnIdThatIsLiveOrInvalidThrows() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let store = SessionStore(directory: scratch.url)
        let info = SessionSamples.info()
        let live = try store.start(info)
        #expect(throws: SessionError.self) { try store.start(info) }
        let invalid = SessionSamples.info(id: "../escape")
        let error = #expect(throws: SessionError.self) { try store.start(invalid) }
        #expect(error?.code == .invalidID)
        live.end()
    }

    @Test func callsAfterEndAreCountedNotWritten() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let session = try SessionStore(directory: scratch.url).start(SessionSamples.info())
        session.end()
        session.spanBegan(SessionSamples.span(id: 1))
        session.end()
        #expect(session.failureCount == 1)
        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        #expect(recovered.first?.orphanedSpans == [])
    }

    @Test func aCorruptedJournalStaysAndIsReported() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        try startAndAbandon(info, in: scratch) { $0.spanBegan(SessionSamples.span(id: 1)) }
        let journalDirectory = scratch.sessions.appendingPathComponent(info.id)
        var generator = SeededRandom(seed: 0xC0FFEE)
        for name in try FileManager.default.contentsOfDirectory(atPath: journalDirectory.path) {
            let file = journalDirectory.appendingPathComponent(name)
            let size = try Data(contentsOf: file).count
            try Data((0..<max(size, 64)).map { _ in UInt8.random(in: 1...255, using: &generator) }).write(to: file)
        }

        let store = SessionStore(directory: scratch.url)
        let recovered = SessionSamples.recoverSettled(store)
        try #require(recovered.count == 1)
        guard case .unreadable(let reason) = recovered[0].status else {
            Issue.record("expected unreadable, got \(recovered[0].status)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(recovered[0].id == info.id)
        try store.acknowledge(recovered[0])
        #expect(FileManager.default.fileExists(atPath: journalDirectory.path))
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().map(\.id) == [info.id])
    }

    @Test func aTornTailIsReportedAndWhatPrecedesItKept() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        try startAndAbandon(info, in: scratch) { session in
            session.spanBegan(SessionSamples.span(id: 1))
            session.setOngoing(SessionSamples.marker(id: 2, durationNanos: 3_000_000_000))
        }
        // Half a frame at the end of the newest segment: what a write cut short by a crash leaves.
        let journalDirectory = scratch.sessions.appendingPathComponent(info.id)
        // The newest segment holding data: the journal may already have created the next,
        // still empty segment in the background.
        let segments = try FileManager.default.contentsOfDirectory(atPath: journalDirectory.path).filter {
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: journalDirectory.appendingPathComponent($0).path)
            return ((attributes?[.size] as? NSNumber)?.intValue ?? 0) > 0
        }
        let newest = try #require(segments.max())
        let handle = try FileHandle(forWritingTo: journalDirectory.appendingPathComponent(newest))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([40, 0, 0, 0, 0x12, 0x34]))
        try handle.close()

        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        try #require(recovered.count == 1)
        #expect(recovered[0].status == .crashed)
        #expect(recovered[0].orphanedSpans == [SessionSamples.span(id: 1)])
        #expect(recovered[0].fatalMarkers == [SessionSamples.marker(id: 2, durationNanos: 3_000_000_000)])
        #expect(try #require(recovered[0].recoveryNote).contains("torn"))
    }

    @Test func aStaleLockWithoutJournalIsRemoved() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
        let stale = scratch.sessions.appendingPathComponent("0123456789abcdef.lock")
        try Data().write(to: stale)
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
    }

    @Test func sessionInfoRoundTripsThroughJSON() throws {
        let info = SessionSamples.info()
        #expect(try JSONDecoder().decode(SessionInfo.self, from: JSONEncoder().encode(info)) == info)
    }

    @Test func hostInfoIsReadFromTheMachine() {
        let host = SessionInfo.Host.current()
        #expect(!host.kernel.isEmpty)
        #expect(!host.arch.isEmpty)
        #expect(!host.os.isEmpty)
        #expect(host.cores >= 1)
        #expect(host.memoryBytes > 0)
        let id = SessionInfo.randomID()
        #expect(id.count == 16 && id.allSatisfy(\.isHexDigit))
    }

    /// Starts `info`, runs `body`, and drops the session without `end()`, as a crash would:
    /// the lock's descriptor closes with the session, as the kernel closes a dead process's.
    private func startAndAbandon(
        _ info: SessionInfo, in scratch: TemporaryDirectory, _ body: (LiveSession) -> Void
    )
        throws
    {
        let session = try SessionStore(directory: scratch.url).start(info)
        body(session)
        #expect(session.failureCount == 0)
    }
}
