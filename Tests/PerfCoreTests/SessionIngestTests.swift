// Replaying journals: what recovery says about lost entries (torn tail, drops, gaps, junk).
import Foundation
import Testing

@testable import PerfCore

@Suite struct SessionIngestTests {
    let info = SessionSamples.info(id: "feedfacefeedface")
    var header: Data { SessionEntryCodec.encode(.start(info), sequence: 0) }

    func entries(_ list: [(UInt64, SessionEntry)]) -> [Data] {
        list.map { SessionEntryCodec.encode($0.1, sequence: $0.0) }
    }

    @Test func aCompleteJournalHasNoNote() {
        let session = SessionIngest.ingest(
            id: info.id, headers: [header, header],
            entries: entries([(1, .spanBegan(SessionSamples.span(id: 1))), (2, .end(wallNanos: 5))]), tornTail: false,
            droppedOlderEntries: false)
        #expect(session.status == .terminated(endWallNanos: 5))
        #expect(session.info == info)
        #expect(session.recoveryNote == nil)
        #expect(session.fatalMarkers.isEmpty)
        #expect(session.orphanedSpans == [SessionSamples.span(id: 1)])
    }

    @Test func aTornTailIsNoted() throws {
        let session = SessionIngest.ingest(
            id: info.id, headers: [header], entries: entries([(1, .spanBegan(SessionSamples.span(id: 1)))]),
            tornTail: true, droppedOlderEntries: false)
        #expect(session.status == .crashed)
        #expect(try #require(session.recoveryNote).contains("torn"))
    }

    @Test func droppedOlderEntriesAreNotedFromTheFlagOrTheFirstSequence() throws {
        let flagged = SessionIngest.ingest(
            id: info.id, headers: [header], entries: entries([(1, .spanClosed(id: 1))]), tornTail: false,
            droppedOlderEntries: true)
        #expect(try #require(flagged.recoveryNote).contains("dropped"))
        let inferred = SessionIngest.ingest(
            id: info.id, headers: [header], entries: entries([(40, .spanClosed(id: 1))]), tornTail: false,
            droppedOlderEntries: false)
        #expect(try #require(inferred.recoveryNote).contains("dropped"))
    }

    @Test func aGapIsNotedButReorderingIsNot() throws {
        let reordered = SessionIngest.ingest(
            id: info.id, headers: [header],
            entries: entries([(2, .spanClosed(id: 1)), (1, .spanClosed(id: 2)), (3, .spanClosed(id: 3))]),
            tornTail: false, droppedOlderEntries: false)
        #expect(reordered.recoveryNote == nil)
        let gapped = SessionIngest.ingest(
            id: info.id, headers: [header],
            entries: entries([(1, .spanClosed(id: 1)), (2, .spanClosed(id: 2)), (6, .spanClosed(id: 3))]),
            tornTail: false, droppedOlderEntries: false)
        #expect(try #require(gapped.recoveryNote).contains("3 entries are missing"))
    }

    @Test func entriesAreReplayedInSequenceOrderNotAppendOrder() {
        let session = SessionIngest.ingest(
            id: info.id, headers: [header],
            entries: entries([
                (2, .spanClosed(id: 1)), (1, .spanBegan(SessionSamples.span(id: 1))),
                (4, .ongoingCleared(id: 5)), (3, .ongoingSet(SessionSamples.marker(id: 5, durationNanos: 1))),
            ]), tornTail: false, droppedOlderEntries: false)
        #expect(session.status == .crashed)
        #expect(session.orphanedSpans.isEmpty)
        #expect(session.fatalMarkers.isEmpty)
        #expect(session.recoveryNote == nil)
    }

    @Test func junkAndUnknownEntriesAreSkippedAndNoted() throws {
        var unknown = SessionEntryCodec.encode(.spanClosed(id: 1), sequence: 2)
        unknown[1] = 99
        let session = SessionIngest.ingest(
            id: info.id, headers: [header],
            entries: [Data([0xFF])] + entries([(1, .spanBegan(SessionSamples.span(id: 1)))]) + [unknown],
            tornTail: false,
            droppedOlderEntries: false)
        #expect(session.status == .crashed)
        #expect(session.orphanedSpans == [SessionSamples.span(id: 1)])
        let note = try #require(session.recoveryNote)
        #expect(note.contains("1 entries did not decode"))
        #expect(note.contains("1 entries of a newer format"))
    }

    @Test func aHeaderInTheEntriesIsAccepted() {
        let session = SessionIngest.ingest(
            id: info.id, headers: [], entries: [header] + entries([(1, .end(wallNanos: 9))]), tornTail: false,
            droppedOlderEntries: false)
        #expect(session.info == info)
        #expect(session.status == .terminated(endWallNanos: 9))
    }

    @Test func noHeaderMeansUnreadable() {
        let session = SessionIngest.ingest(
            id: info.id, headers: [Data([1, 2, 3])], entries: entries([(1, .end(wallNanos: 9))]), tornTail: false,
            droppedOlderEntries: false)
        #expect(session.info == nil)
        guard case .unreadable = session.status else {
            Issue.record("expected unreadable, got \(session.status)")
            return
        }
    }
}
