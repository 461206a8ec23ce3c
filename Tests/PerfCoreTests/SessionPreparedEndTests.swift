// The session's end record written ahead at its start (so a full disk still records the end): used
// by a clean end, never mistaken for one after a crash, and replaced by a plain write when gone.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SessionPreparedEndTests {
    private func ending(_ scratch: TemporaryDirectory, _ id: String) -> String {
        SessionIndex(dataDirectory: scratch.url).endingPath(id: id)
    }

    @Test func aCleanEndIsRecordedThroughTheEndWrittenAhead() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        let session = try SessionStore(directory: scratch.url).start(info)
        let prepared = try #require(SessionIndex.readFile(ending(scratch, info.id)))
        #expect(SessionIndexCodec.decode(prepared, expectedID: info.id)?.status == .terminated)
        #expect(SessionIndex(dataDirectory: scratch.url).record(id: info.id)?.status == .active)
        session.end()
        #expect(!FileManager.default.fileExists(atPath: ending(scratch, info.id)))
        let record = try #require(SessionIndex(dataDirectory: scratch.url).record(id: info.id))
        #expect(record.status == .terminated && record.endedAtMs != nil && record.endedAtMs != record.startedAtMs)
        #expect(session.failureCount == 0)
    }

    @Test func aCrashedSessionIsNeverTakenForEndedAndItsEndWrittenAheadGoes() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        do {
            let session = try SessionStore(directory: scratch.url).start(info)
            session.spanBegan(SessionSamples.span(id: 1))
        }
        let store = SessionStore(directory: scratch.url)
        let recovered = SessionSamples.recoverSettled(store)
        #expect(recovered.map(\.id) == [info.id])
        for session in recovered { try store.acknowledge(session) }
        #expect(!FileManager.default.fileExists(atPath: ending(scratch, info.id)))
        #expect(SessionIndex(dataDirectory: scratch.url).record(id: info.id)?.status == .crashed)
    }

    @Test func withoutTheEndWrittenAheadTheEndIsWrittenAsUsual() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        let session = try SessionStore(directory: scratch.url).start(info)
        #expect(unlink(ending(scratch, info.id)) == 0)
        session.end()
        #expect(SessionIndex(dataDirectory: scratch.url).record(id: info.id)?.status == .terminated)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.sessions.path)
            .filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }
}
