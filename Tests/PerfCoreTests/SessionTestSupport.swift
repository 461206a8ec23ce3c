// Helpers shared by the session tests: scratch directories, sample values, a seeded RNG, and
// the perf-bench child that crash tests SIGKILL.
import Foundation

@testable import PerfCore

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct SessionScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "perf-session-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var sessions: URL { url.appendingPathComponent("sessions", isDirectory: true) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

enum SessionSamples {
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

/// SplitMix64: tiny, seedable, good enough to drive fuzzers repeatably.
struct SessionSeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A running `perf-bench child session` that has printed `ready`.
struct SessionChild {
    let process: Process

    /// Spawns the child on `directory` and waits for its `ready` line.
    static func start(directory: URL, sessionID: String) throws -> SessionChild {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("perf-bench")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["child", "session", directory.path, sessionID]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var received = Data()
        // Ends either with the ready line or at EOF if the child exits: never waits forever.
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        guard String(decoding: received, as: UTF8.self) == "ready\n" else {
            process.terminate()
            process.waitUntilExit()
            throw SessionChildError(
                message: "child did not get ready; said '\(String(decoding: received, as: UTF8.self))'")
        }
        return SessionChild(process: process)
    }

    /// SIGKILLs the child and reaps it.
    func kill() -> Int32 {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

struct SessionChildError: Error {
    var message: String
}
