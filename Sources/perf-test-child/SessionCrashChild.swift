// A process for crash tests to SIGKILL mid-session: a bounded span and a hang left in progress.
import Foundation
import PerfCore

/// `perf-test-child session <dir> [<session-id>]`: starts a session in `<dir>`, journals the
/// begin of a bounded span (id 1, `"child.upload"`, 5 s budget) and an ongoing hang marker
/// (id 1, 1.5 s so far, a culprit and two stack frames), prints `ready` and blocks until killed.
enum SessionCrashChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard let path = arguments.first else {
            FileHandle.standardError.write(Data("usage: perf-test-child session <dir> [<session-id>]\n".utf8))
            return 2
        }
        let store = SessionStore(directory: URL(fileURLWithPath: path))
        let info = SessionInfo(
            id: arguments.count > 1 ? arguments[1] : SessionInfo.randomID(),
            app: .init(name: "perf-test-child", version: "1.0", build: "test"))
        let session: LiveSession
        do {
            session = try store.start(info)
        } catch {
            FileHandle.standardError.write(Data("perf-test-child session: \(error)\n".utf8))
            return 1
        }
        let now = SystemClock().wallNanos()
        session.spanBegan(
            id: 1, name: "child.upload", key: "upload-1", site: "perf-test-child/SessionCrashChild.swift:30",
            budgetNanos: 5_000_000_000, lifetime: "bounded", startWallNanos: now)
        session.setOngoing(
            OngoingMarker(
                id: 1, kind: "hang", name: "main", startedWallNanos: now, lastKnownDurationNanos: 1_000_000_000,
                payload: ["culprit": "Child.block"]))
        session.setOngoing(
            OngoingMarker(
                id: 1, kind: "hang", name: "main", startedWallNanos: now, lastKnownDurationNanos: 1_500_000_000,
                payload: ["culprit": "Child.block", "stack": "Child.block\nmain"]))
        guard session.failureCount == 0 else {
            FileHandle.standardError.write(
                Data("perf-test-child session: \(session.failureCount) journal failures\n".utf8))
            return 1
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        // Blocks until the test's SIGKILL; keeps the session (and its lock) alive meanwhile.
        while true { withExtendedLifetime(session) { _ = pause() } }
    }
}
