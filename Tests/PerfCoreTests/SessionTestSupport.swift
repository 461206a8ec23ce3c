// Helpers shared by the session tests: sample values and the `perf-test-child session` that
// crash tests SIGKILL.
import Foundation
import PerfTestSupport

@testable import PerfCore

extension TemporaryDirectory {
    /// Where the session tests keep their sessions.
    var sessions: URL { url.appendingPathComponent("sessions", isDirectory: true) }
}

enum SessionSamples {
    /// Recovery right after sessions ended in this process, expecting at least `count` of them.
    ///
    /// A session's lock is an `flock` on an open file description. While another test of this
    /// process is in `posix_spawn` (glibc's vfork copies the descriptor table), its child holds a
    /// copy of every descriptor until it execs and the close-on-exec ones go, so a lock released
    /// an instant before can still read as busy and its session is skipped as live. Recovers
    /// again, with the same store, until `count` sessions are seen (10 s at most); returns the last.
    static func recoverSettled(_ store: SessionStore, count: Int = 1) -> [RecoveredSession] {
        var recovered = store.recoverPriorSessions()
        _ = pollUntil(seconds: 10) {
            recovered = store.recoverPriorSessions()
            return recovered.count >= count
        }
        return recovered
    }

    static let host = SessionInfo.Host(
        os: "TestOS 1", kernel: "6.0.0-test", arch: "x86_64", cpuModel: "Test CPU @ 1GHz", cores: 2,
        memoryBytes: 4 << 30)

    static func info(id: String = SessionInfo.randomID(), start: UInt64 = 1_796_000_000_000_000_000) -> SessionInfo {
        SessionInfo(
            id: id, pid: 4242, startWallNanos: start, app: .init(name: "tests", version: "1.2.3", build: "99"),
            host: host)
    }

    static func span(id: UInt64, name: String = "sync.upload") -> JournalledSpan {
        JournalledSpan(
            id: id, name: name, key: "k\(id)", site: "App/Sync.swift:\(id)", budgetNanos: 5_000_000_000,
            lifetime: "bounded", startWallNanos: 1_796_000_000_100_000_000 + id)
    }

    static func marker(id: UInt64, durationNanos: UInt64) -> OngoingMarker {
        OngoingMarker(
            id: id, kind: "hang", name: "main", startedWallNanos: 1_796_000_000_200_000_000,
            lastKnownDurationNanos: durationNanos, payload: ["culprit": "Feed.reload", "stack": "a\nb"])
    }
}

extension LiveSession {
    func spanBegan(_ span: JournalledSpan) {
        spanBegan(
            id: span.id, name: span.name, key: span.key, site: span.site, budgetNanos: span.budgetNanos,
            lifetime: span.lifetime, startWallNanos: span.startWallNanos)
    }
}

/// A running `perf-test-child session` that has printed `ready`.
struct SessionChild {
    let process: ChildProcess

    /// Spawns the child on `directory` and waits for its `ready` line.
    static func start(directory: URL, sessionID: String) throws -> SessionChild {
        let process = try ChildProcess(
            executable: BuildProducts.testChild, arguments: ["session", directory.path, sessionID])
        // Ends with the ready line, or at EOF or after 30 s of silence: never waits forever.
        let said = process.readLine(timeoutSeconds: 30)
        guard said == "ready" else {
            process.killAndWait()
            throw ChildProcess.Failure(description: "child did not get ready; said '\(said ?? "nothing")'")
        }
        return SessionChild(process: process)
    }

    /// SIGKILLs the child, reaps it and returns the signal that ended it.
    func kill() -> Int32? {
        process.killAndWait()
        return ChildProcess.terminatingSignal(process.wait())
    }
}
