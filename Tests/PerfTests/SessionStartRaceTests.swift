// Processes starting at once on one data directory: each one's recovery looks at the others'
// fresh lock files. A lock file that appeared before its owner locked it could be taken by a
// neighbour's recovery, and the owner then refused its own session ("already live"): its journal
// never started, so the report had no start for it.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SessionStartRaceTests {
    @Test func writersStartingTogetherEachGetTheirSession() throws {
        for round in 0..<30 {
            let directory = try TemporaryDirectory("start-race")
            defer { directory.remove() }
            let children = try (0..<6).map { _ in
                try ChildProcess(
                    executable: BuildProducts.testChild,
                    arguments: ["reliability", "writer", directory.url.path, "lines=1", "acks=0"],
                    mergeStandardError: true)
            }
            for child in children {
                let printed = child.readLines(until: { $0 == "done" }, timeoutSeconds: 60) ?? []
                #expect(ChildProcess.exitedNormally(child.wait()))
                let complaints = printed.filter { $0.hasPrefix("perf:") }
                #expect(complaints.isEmpty, "round \(round): \(complaints)")
            }
            let report = try SessionIndexFixture.report(directory.url)
            let sessions = report["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == 6, "round \(round)")
            for session in sessions {
                #expect(session["startedAt"] is String && session["status"] as? String == "terminated", "\(session)")
            }
        }
    }
}
