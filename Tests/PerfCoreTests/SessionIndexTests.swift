// The session index (`sessions/<id>.session.json`): written at start, end and recovery, whole
// under concurrent writers, bounded without losing a live session's record, and read without
// trusting a byte of it.
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct SessionIndexTests {
    static let t0Nanos: UInt64 = 1_796_000_000_000_000_000

    @Test func aSessionIsActiveFromItsStartAndTerminatedWithItsEndAtACleanEnd() throws {
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let clock = ManualClock(wallNanos: Self.t0Nanos + 42_000_000_000)
        let store = SessionStore(directory: directory.url, clock: clock)
        let info = SessionSamples.info(id: "live-1", start: Self.t0Nanos)
        let session = try store.start(info)
        let started = try #require(store.index.record(id: "live-1"))
        #expect(
            started
                == SessionIndexRecord(
                    id: "live-1", pid: 4242, app: info.app, startedAtMs: 1_796_000_000_000, status: .active))
        session.end()
        let ended = try #require(store.index.record(id: "live-1"))
        #expect(ended.status == .terminated)
        #expect(ended.endedAtMs == 1_796_000_042_000)
        #expect(ended.startedAtMs == started.startedAtMs)
        #expect(SessionIndex(dataDirectory: directory.url).records() == [ended])
        // The next start's recovery reads the journal's end marker and leaves the record alone.
        for recovered in SessionSamples.recoverSettled(store) { try store.acknowledge(recovered) }
        #expect(store.index.record(id: "live-1") == ended)
    }

    @Test func recoveryMarksACrashedSessionCrashedWithWhenItWasLastAlive() throws {
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let store = SessionStore(directory: directory.url)
        let info = SessionSamples.info(id: "crashes", start: Self.t0Nanos)
        var session: LiveSession? = try store.start(info)
        let memory = try SpanMemory.create(
            path: store.spanMemoryPath(id: "crashes"), .init(bytes: 1 << 20, nameCapacity: 8, ringCapacity: 16),
            anchorMonotonicNanos: 1_000, anchorWallNanos: Self.t0Nanos)
        memory.heartbeat(monotonicNanos: 9_000_001_000, wallNanos: Self.t0Nanos + 9_000_000_000)
        // Dropped without end(): its lock goes as a dead process's would, no end marker.
        session = nil
        #expect(session == nil)
        let recovered = SessionSamples.recoverSettled(SessionStore(directory: directory.url))
        #expect(recovered.map(\.status) == [.crashed])
        let record = try #require(store.index.record(id: "crashes"))
        #expect(record.status == .crashed)
        #expect(record.startedAtMs == 1_796_000_000_000)
        #expect(record.lastAliveAtMs == 1_796_000_009_000)
        #expect(record.endedAtMs == nil)
    }

    @Test func recoveryWritesTheRecordOfASessionFromBeforeTheIndex() throws {
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let store = SessionStore(directory: directory.url, clock: ManualClock(wallNanos: Self.t0Nanos + 5_000_000))
        try store.start(SessionSamples.info(id: "older", start: Self.t0Nanos)).end()
        // An older build wrote no record.
        try FileManager.default.removeItem(atPath: store.index.path(id: "older"))
        _ = SessionSamples.recoverSettled(store)
        let record = try #require(store.index.record(id: "older"))
        #expect(record.status == .terminated)
        #expect(record.endedAtMs == 1_796_000_000_005)
    }

    @Test func pruningKeepsTheNewestAndEveryRecordWhoseJournalIsStillThere() throws {
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let index = SessionIndex(dataDirectory: directory.url)
        try FileManager.default.createDirectory(at: directory.sessions, withIntermediateDirectories: true)
        for number in 0..<12 {
            var record = SessionIndexRecord(
                starting: SessionSamples.info(id: "s\(number)", start: Self.t0Nanos + UInt64(number) * 1_000_000_000))
            record.status = .terminated
            try index.write(record)
        }
        // The oldest session is live (its journal is there): its record must survive.
        let store = SessionStore(directory: directory.url)
        let live = try store.start(SessionSamples.info(id: "s0", start: Self.t0Nanos))
        defer { live.end() }
        try "x".write(toFile: index.folder + "/s3" + SessionIndex.suffix, atomically: false, encoding: .utf8)
        index.prune(capacity: 5)
        let kept = Set(index.records().map(\.id))
        #expect(kept == ["s0", "s8", "s9", "s10", "s11"], "the damaged s3 counts as oldest and goes")
        #expect(!FileManager.default.fileExists(atPath: index.folder + "/s3" + SessionIndex.suffix))
    }

    @Test func concurrentWritersNeverLeaveATornOrMissingRecord() throws {
        let seed = SeededRandom.makeSeed()
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let index = SessionIndex(dataDirectory: directory.url)
        try FileManager.default.createDirectory(at: directory.sessions, withIntermediateDirectories: true)
        // Records of many sizes (app names up to 2 KiB), so a torn one would be visible.
        @Sendable func record(_ writer: Int, _ round: Int, _ random: inout SeededRandom) -> SessionIndexRecord {
            let name = String(repeating: "w\(writer)", count: Int(random.next() % 1_000))
            return SessionIndexRecord(
                id: "shared", pid: Int32(writer), app: .init(name: name, version: "\(round)"),
                startedAtMs: Int64(round), status: round % 2 == 0 ? .active : .terminated,
                endedAtMs: round % 2 == 0 ? nil : Int64(round) + 1)
        }
        var first = SeededRandom(seed: seed)
        try index.write(record(0, 0, &first))
        final class Tally: Sendable {
            let writersLeft = Atomic<Int>(4)
            let bad = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
        }
        let tally = Tally()
        let group = DispatchGroup()
        // Real threads, not a pool sized to the cores: readers run while writers write.
        for thread in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard thread < 4 else {
                    // Readers: every read finds a whole record that some writer wrote.
                    repeat {
                        tally.reads.add(1, ordering: .relaxed)
                        guard let read = index.record(id: "shared"),
                            read.app.name == String(repeating: "w\(read.pid)", count: read.app.name.utf8.count / 2),
                            read.app.version == "\(read.startedAtMs)"
                        else {
                            tally.bad.add(1, ordering: .relaxed)
                            continue
                        }
                    } while tally.writersLeft.load(ordering: .acquiring) > 0
                    return
                }
                var random = SeededRandom(seed: seed &+ UInt64(thread))
                for round in 0..<300 { try? index.write(record(thread, round, &random)) }
                tally.writersLeft.subtract(1, ordering: .releasing)
            }.start()
        }
        group.wait()
        #expect(tally.bad.load(ordering: .relaxed) == 0, "seed \(seed)")
        #expect(tally.reads.load(ordering: .relaxed) > 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: index.folder).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no temporary file is left behind")
    }

    @Test func theReaderNeverTrapsAndSkipsWhatItDoesNotKnow() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let valid = SessionIndexCodec.encode(
            SessionIndexRecord(
                id: "fuzzed", pid: 9, app: .init(name: "app", version: "1", build: "2"), startedAtMs: 1_796_000_000_000,
                status: .crashed, lastAliveAtMs: 1_796_000_001_000))
        #expect(SessionIndexCodec.decode(valid)?.lastAliveAtMs == 1_796_000_001_000)
        for round in 0..<20_000 {
            var bytes = valid
            switch random.next() % 4 {
            case 0:
                bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            case 1:
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
            case 2:
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            default:
                let fragments = ["{", "}", "[", "\"", ":", ",", "1e999", "-1", "null", "\"version\":2", "\\u0000"]
                let at = Int(random.next() % UInt64(bytes.count))
                bytes.insert(contentsOf: Array(fragments[Int(random.next() % UInt64(fragments.count))].utf8), at: at)
            }
            if let record = SessionIndexCodec.decode(bytes) {
                #expect(SessionInfo.isValidID(record.id), "seed \(seed) round \(round)")
                #expect(record.startedAtMs >= 0 && record.startedAtMs <= SessionIndexCodec.maximumMs)
            }
        }
        let cases: [(String, Bool)] = [
            (#"{"version":2,"id":"a","startedAtMs":1,"status":"active"}"#, false),
            (#"{"version":1,"id":"a","startedAtMs":1,"status":"paused"}"#, false),
            (#"{"version":1,"id":"../x","startedAtMs":1,"status":"active"}"#, false),
            (#"{"version":1,"id":"a","startedAtMs":-5,"status":"active"}"#, false),
            (#"{"version":1,"id":"a","status":"active"}"#, false),
            (#"{"version":1,"id":"a","startedAtMs":1,"status":"active","endedAtMs":"soon","later":[1]}"#, true),
            (String(repeating: "[", count: 10_000), false),
        ]
        for (text, reads) in cases {
            #expect((SessionIndexCodec.decode(Array(text.utf8)) != nil) == reads, "\(text.prefix(80))")
        }
    }

    @Test func aDirectoryOfJunkReadsAsTheRecordsItHolds() throws {
        let directory = try TemporaryDirectory("session-index")
        defer { directory.remove() }
        let index = SessionIndex(dataDirectory: directory.url)
        try FileManager.default.createDirectory(at: directory.sessions, withIntermediateDirectories: true)
        try index.write(SessionIndexRecord(starting: SessionSamples.info(id: "good", start: Self.t0Nanos)))
        let folder = index.folder
        try Data(count: 64 * 1024).write(to: URL(fileURLWithPath: folder + "/big" + SessionIndex.suffix))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/other" + SessionIndex.suffix))
        try FileManager.default.createDirectory(
            atPath: folder + "/dir" + SessionIndex.suffix, withIntermediateDirectories: true)
        #expect(mkfifo(folder + "/fifo" + SessionIndex.suffix, 0o600) == 0)
        try FileManager.default.copyItem(
            atPath: folder + "/good" + SessionIndex.suffix, toPath: folder + "/renamed" + SessionIndex.suffix)
        try Data("half".utf8).write(to: URL(fileURLWithPath: folder + "/.good" + SessionIndex.suffix + ".tmp-1-2"))
        #expect(index.records().map(\.id) == ["good"], "a record under another id's name is not that id's")
    }
}
