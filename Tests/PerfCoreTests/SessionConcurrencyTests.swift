// A live session written from many threads at once, then abandoned: recovery must see every
// entry, no gap, and exactly the spans and markers left open.
import Dispatch
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct SessionConcurrencyTests {
    @Test(arguments: [UInt64(7), 0x5EED_5E55])
    func concurrentWritersLoseNothing(seed: UInt64) throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let threads = 4
        let spansPerThread = 200
        // Each thread's plan is drawn up front from the seed, so a failure replays exactly.
        var generator = SeededRandom(seed: seed)
        let plans: [[Bool]] = (0..<threads).map { _ in
            (0..<spansPerThread).map { _ in Bool.random(using: &generator) }
        }
        let info = SessionSamples.info()
        do {
            let session = try SessionStore(directory: scratch.url).start(info)
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for (index, closes) in plans[thread].enumerated() {
                    let id = UInt64(thread * spansPerThread + index)
                    session.spanBegan(SessionSamples.span(id: id))
                    session.setOngoing(SessionSamples.marker(id: id, durationNanos: UInt64(index)))
                    if closes {
                        session.spanClosed(id: id)
                        session.clearOngoing(id: id)
                    }
                }
            }
            #expect(session.failureCount == 0, "seed \(seed)")
        }

        let expectedOpen = Set(
            (0..<threads).flatMap { thread in
                plans[thread].indices.filter { !plans[thread][$0] }.map { UInt64(thread * spansPerThread + $0) }
            })
        let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        try #require(recovered.count == 1, "seed \(seed)")
        #expect(recovered[0].status == .crashed, "seed \(seed)")
        #expect(recovered[0].recoveryNote == nil, "seed \(seed): \(recovered[0].recoveryNote ?? "")")
        #expect(Set(recovered[0].orphanedSpans.map(\.id)) == expectedOpen, "seed \(seed)")
        #expect(recovered[0].orphanedSpans.count == expectedOpen.count, "seed \(seed)")
        #expect(Set(recovered[0].fatalMarkers.map(\.id)) == expectedOpen, "seed \(seed)")
    }

    @Test func aCrashBeforeAcknowledgingLosesNothing() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let info = SessionSamples.info()
        do {
            let session = try SessionStore(directory: scratch.url).start(info)
            session.spanBegan(SessionSamples.span(id: 1))
        }
        do {
            // Recovered, then the process "dies" before writing the ledger or acknowledging.
            let first = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
            #expect(first.map(\.id) == [info.id])
        }
        let again = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
        #expect(again.map(\.id) == [info.id])
        #expect(again.first?.orphanedSpans == [SessionSamples.span(id: 1)])
    }

    @Test func racingStoresIngestEachSessionExactlyOnce() throws {
        let scratch = try TemporaryDirectory("session")
        defer { scratch.remove() }
        let ids = (0..<12).map { _ in SessionInfo.randomID() }
        for id in ids {
            let session = try SessionStore(directory: scratch.url).start(SessionSamples.info(id: id))
            session.spanBegan(SessionSamples.span(id: 1))
        }
        let stores = 4
        let claimed = SessionClaims()
        DispatchQueue.concurrentPerform(iterations: stores) { _ in
            let store = SessionStore(directory: scratch.url)
            for session in store.recoverPriorSessions() {
                claimed.add(session.id)
                try? store.acknowledge(session)
            }
        }
        #expect(claimed.all.sorted() == ids.sorted())
        #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
        // Journals and locks are gone; each session's index record stays, now final.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.sessions.path).sorted()
                == ids.map { $0 + SessionIndex.suffix }.sorted())
    }
}

/// Session ids claimed by racing stores, duplicates kept so the test can see them.
final class SessionClaims: Sendable {
    private let ids = Mutex<[String]>([])

    func add(_ id: String) { ids.withLock { $0.append(id) } }

    var all: [String] { ids.withLock { $0 } }
}
