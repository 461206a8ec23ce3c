// perf-diagnostics/ under several writers: a payload is never half-visible, two writers of one
// name never share a temporary file, and a pruner leaves another writer's temporary file alone.
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

@Suite struct DiagnosticFilesConcurrencyTests {
    @Test func twoWritersOfTheSamePayloadNameNeverTearItNorFail() throws {
        let directory = try TemporaryDirectory("diagnostics-writers")
        defer { directory.remove() }
        // The same session and millisecond: two threads of one process (one pid) capturing at once.
        let name = DiagnosticFiles.fileName(takenAtMs: 1_796_216_400_000, session: "same")
        let path = directory.url.appendingPathComponent(DiagnosticFiles.directoryName).path + "/" + name
        let bodies = [
            Array(repeating: UInt8(ascii: "a"), count: 200_000), Array(repeating: UInt8(ascii: "b"), count: 3),
        ]
        final class Tally: Sendable {
            let failures = Atomic<Int>(0)
            let torn = Atomic<Int>(0)
            let writersLeft = Atomic<Int>(2)
        }
        let tally = Tally()
        let group = DispatchGroup()
        for thread in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard thread < 2 else {
                    // A reader: whatever it finds under the payload's name is one whole body.
                    repeat {
                        guard case .success(let bytes) = ReportFile.read(path, limit: 1 << 20) else { continue }
                        if bytes != bodies[0], bytes != bodies[1] { tally.torn.add(1, ordering: .relaxed) }
                    } while tally.writersLeft.load(ordering: .acquiring) > 0
                    return
                }
                for _ in 0..<200 {
                    do {
                        _ = try DiagnosticFiles.write(bodies[thread], name: name, dataDirectory: directory.url.path)
                    } catch {
                        tally.failures.add(1, ordering: .relaxed)
                    }
                }
                tally.writersLeft.subtract(1, ordering: .releasing)
            }.start()
        }
        group.wait()
        #expect(tally.failures.load(ordering: .relaxed) == 0, "no write lost its temporary file to the other")
        #expect(tally.torn.load(ordering: .relaxed) == 0, "no reader saw a mix of the two")
        let final = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(final == bodies[0] || final == bodies[1])
        let folder = directory.url.appendingPathComponent(DiagnosticFiles.directoryName).path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [name], "no temporary file left")
    }

    @Test func pruningLeavesAnotherWritersTemporaryFileAndDropsOnlyAbandonedOnes() throws {
        let directory = try TemporaryDirectory("diagnostics-writers")
        defer { directory.remove() }
        let folder = directory.url.appendingPathComponent(DiagnosticFiles.directoryName).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Another process is writing this one right now; that one was left by a writer killed an hour ago.
        let inFlight = folder + "/.tmp-99999-0123456789abcdef-20261202T130000000Z-other.json"
        let abandoned = folder + "/.tmp-99998-fedcba9876543210-20261202T120000000Z-dead.json"
        try Data("{\"half".utf8).write(to: URL(fileURLWithPath: inFlight))
        try Data("{\"half".utf8).write(to: URL(fileURLWithPath: abandoned))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3_600)], ofItemAtPath: abandoned)
        for index in 0..<(DiagnosticFiles.keep + 3) {
            let name = DiagnosticFiles.fileName(takenAtMs: 1_796_216_400_000 + Int64(index) * 1000, session: "s")
            _ = try DiagnosticFiles.write(Array("{}".utf8), name: name, dataDirectory: directory.url.path)
        }
        #expect(FileManager.default.fileExists(atPath: inFlight), "a write in progress is never pruned")
        #expect(!FileManager.default.fileExists(atPath: abandoned), "a temporary file an hour old was abandoned")
        #expect(try DiagnosticFiles.list(folder: folder).count == DiagnosticFiles.keep)
    }
}
