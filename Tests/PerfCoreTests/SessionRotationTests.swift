// Sessions whose journal rotates past its byte budget: the header and open spans survive.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SessionRotationTests {
    @Test func anOpenSpanAndMarkerOutliveRotationOfTheirBegin() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        let budget = 4096
        do {
            let session = try SessionStore(directory: scratch.url, journalByteBudget: budget).start(info)
            session.spanBegan(SessionSamples.span(id: 1))
            session.setOngoing(SessionSamples.marker(id: 1, durationNanos: 1_000_000_000))
            // Churn far past the budget: the first begin's segment is dropped long before the end.
            for id in UInt64(2)..<600 {
                session.spanBegan(SessionSamples.span(id: id, name: "churn"))
                session.spanClosed(id: id)
            }
            session.spanBegan(SessionSamples.span(id: 600, name: "late"))
            #expect(session.failureCount == 0)
        }
        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        try #require(recovered.count == 1)
        #expect(recovered[0].info == info)
        #expect(recovered[0].status == .crashed)
        #expect(recovered[0].orphanedSpans.map(\.id) == [1, 600])
        #expect(recovered[0].fatalMarkers == [SessionSamples.marker(id: 1, durationNanos: 1_000_000_000)])
        // Dropped segments are unlinked in the background (the reaper outlives the journal), so
        // how many are gone when recovery reads depends on timing; whatever is gone was dropped,
        // oldest first, and the note says so. Recovery racing the reaper once kept segment 1 and
        // lost the ones unlinked after it was read: "663 entries are missing between the first
        // and the last kept", no drop (RecoveryDuringReapingTests forces that interleaving).
        if let note = recovered[0].recoveryNote {
            #expect(note.contains("dropped"), "\(note)")
            #expect(!note.contains("missing"), "\(note)")
        }
    }
}
