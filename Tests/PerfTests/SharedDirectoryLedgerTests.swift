// Several processes, one data directory: four writers each end 20,000 over-budget spans
// into one ledger. A process that counted the file's size alone and rotated by itself would
// overfill `.prev` past the cap and lose whole processes' lines: the shared state prevents it.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SharedDirectoryLedgerTests {
    static let writers = 4
    static let lines = 20_000

    /// Runs the writers side by side on a fresh directory and checks what they left.
    static func run(cap: Int) throws -> (check: SharedLedgerCheck, directory: TemporaryDirectory) {
        let directory = try TemporaryDirectory("shared-ledger")
        let children = try (0..<writers).map { _ in
            try ChildProcess(
                executable: BuildProducts.testChild,
                arguments: ["reliability", "writer", directory.url.path, "lines=\(lines)", "cap=\(cap)", "acks=0"])
        }
        var sessions: [String] = []
        for child in children {
            let printed = child.readLines(until: { $0 == "done" }, timeoutSeconds: 120) ?? []
            let status = child.wait()
            #expect(ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0)
            if let line = printed.first(where: { $0.hasPrefix("session ") }) {
                sessions.append(String(line.dropFirst(8)))
            }
        }
        #expect(sessions.count == writers)
        return (SharedLedgerCheck(directory: directory.url, cap: cap, sessions: sessions, lines: lines), directory)
    }

    @Test(.serialized, arguments: [32 * 1024, 512 * 1024])
    func fourWritersKeepTheCapAndTheNewestLines(cap: Int) throws {
        for run in 0..<10 {
            let (check, directory) = try Self.run(cap: cap)
            defer { directory.remove() }
            #expect(check.problems.isEmpty, "run \(run), cap \(cap): \(check.problems) (\(check.summary))")
            #expect(check.previousBytes != nil, "80,000 lines of ~250 bytes rotate a \(cap)-byte ledger")
            // Every writer shut down cleanly: its session reads terminated with its start and end,
            // although the ledger lines that said so rotated away long ago.
            let report = try SessionIndexFixture.report(directory.url)
            let sessions = report["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == Self.writers, "run \(run), cap \(cap)")
            for session in sessions {
                #expect(session["status"] as? String == "terminated", "run \(run), cap \(cap): \(session)")
                #expect(session["startedAt"] is String && session["endedAt"] is String, "run \(run): \(session)")
            }
        }
    }
}
