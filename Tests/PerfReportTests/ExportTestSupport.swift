// The export tests' report, built in code: two sessions (one crashed, one terminated), several
// threads, nested and overlapping spans, over-budget and failing ends, a fatal hang and a hitch,
// notes, an overdue span, memory samples and hostile names. Committed as
// Tests/Fixtures/export/report.json (for the CLI tests) and checked against this builder.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

enum ExportFixture {
    /// `Tests/Fixtures/export/`.
    static let folder = TestFixtures.folder("export")
    /// The committed copy of ``report()``; `PERF_UPDATE_GOLDEN=1` rewrites it.
    static let reportFile = folder.appendingPathComponent("report.json")

    /// A name with every character the formats must escape.
    static let hostile = "a\"b\\c\nd"
    static let sessionA = "a1a1a1a1a1a1a1a1"
    static let sessionB = "b2b2b2b2b2b2b2b2"
    /// 2026-12-02T12:00:00.000Z and ten minutes later, Unix milliseconds.
    static let epochA: Int64 = 1_796_212_800_000
    static let epochB: Int64 = epochA + 600_000

    static func ts(_ unixMs: Int64) -> String { LedgerTimestamp.string(ms: unixMs) }

    static func span(
        _ name: String, tid: Int, startMs: Double, durationMs: Double, exit: String = "success", budgetMs: Double? = nil
    ) -> [String: Any] {
        var span: [String: Any] = [
            "name": name, "tid": tid, "startNs": Int(startMs * 1_000_000), "durationNs": Int(durationMs * 1_000_000),
            "exit": exit,
        ]
        span["budgetMs"] = budgetMs
        return span
    }

    static func line(_ kind: String, _ name: String, session: String, atMs: Int64, _ extra: [String: Any] = [:])
        -> [String: Any]
    {
        ["v": 1, "kind": kind, "name": name, "session": session, "ts": ts(atMs)].merging(extra) { $1 }
    }

    static func histogram(_ millis: [Double]) -> Any {
        var histogram = LatencyHistogram()
        for ms in millis { histogram.record(nanos: UInt64(ms * 1_000_000)) }
        return try! JSONSerialization.jsonObject(with: Data(histogram.jsonString.utf8))
    }

    static func statistics(_ millis: [Double], budgetMs: Double?, overBudget: Int, source: String = "histogram")
        -> [String: Any]
    {
        var entry: [String: Any] = [
            "count": millis.count, "sum": millis.reduce(0, +), "min": millis.min() ?? 0, "max": millis.max() ?? 0,
            "p50Ms": millis.sorted()[millis.count / 2], "p90Ms": millis.max() ?? 0, "p95Ms": millis.max() ?? 0,
            "p99Ms": millis.max() ?? 0, "overBudget": overBudget, "histogram": histogram(millis), "source": source,
            "sites": [],
        ]
        entry["budgetMs"] = budgetMs ?? NSNull()
        return entry
    }

    /// The report as a dictionary; `intervals: false` gives the same report as an older build
    /// would have written it.
    static func reportObject(intervals: Bool = true) -> [String: Any] {
        let a = epochA
        let b = epochB
        let events: [[String: Any]] = [
            line("session", "start", session: sessionA, atMs: a - 200),
            line("span", "boot", session: sessionA, atMs: a - 10, ["durationMs": 40.5, "exit": "success"]),
            // The ring holds this one (it ends with api.get's interval): drawn once, not twice.
            line(
                "span", "api.get", session: sessionA, atMs: a + 31,
                ["durationMs": 30, "budgetMs": 25, "exit": "success", "site": "MyService/API.swift:88"]),
            line("note", "socket.reconnect", session: sessionA, atMs: a + 40, ["detail": "/v1/ws"]),
            line("overdue", "sync.upload", session: sessionA, atMs: a + 110, ["durationMs": 100, "budgetMs": 100]),
            line(
                "hang", "main", session: sessionA, atMs: a + 500,
                [
                    "durationMs": 300, "lowerMs": 280, "upperMs": 320, "fatal": true,
                    "culprit": "MyService.Feed.parse()", "thread": "main (tid 4242, state R)",
                ]),
            line("session", "crashed", session: sessionA, atMs: b - 1),
            line("session", "start", session: sessionB, atMs: b),
            line(
                "span", hostile, session: sessionB, atMs: b + 4,
                ["durationMs": 2.5, "budgetMs": 2, "exit": "expired", "detail": "/x", "count": 3]),
            line(
                "hitch", "main", session: sessionB, atMs: b + 1_000,
                [
                    "durationMs": 150, "lowerMs": 140, "upperMs": 160, "fatal": false,
                    "thread": "main (tid 5000, state S)",
                ]),
            line("note", "note \"quoted\"", session: sessionB, atMs: b + 2_000),
            line("session", "end", session: sessionB, atMs: b + 5_000),
        ]
        var report: [String: Any] = [
            "schema": "perf-report", "schemaVersion": 1, "generatedAt": ts(b + 5_000),
            "generator": "perf-report (Perf report schema 1)",
            "app": ["name": "my\"service", "version": "1.4.0", "build": "812"],
            "host": [
                "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0", "arch": "x86_64", "cpuModel": "Test CPU",
                "cores": 2, "memoryBytes": 8_589_934_592, "swiftVersion": "6.3", "buildConfiguration": "release",
            ],
            "sessions": [
                ["id": sessionB, "startedAt": ts(b), "endedAt": ts(b + 5_000), "status": "terminated"],
                ["id": sessionA, "startedAt": ts(a - 200), "status": "crashed"],
            ],
            "ledger": ["events": events, "malformedLines": 0, "tornTail": 0, "unknownKinds": 0],
            "spans": [
                "api.get": statistics([30, 0.8, 0.9, 1.2, 4], budgetMs: 25, overBudget: 1),
                "boot": statistics([40.5], budgetMs: nil, overBudget: 0, source: "ledger"),
                hostile: statistics([2.5, 0.4], budgetMs: 2, overBudget: 1),
            ],
            "hangs": [
                "count": 1, "fatal": 1, "suppressed": 0, "totalMs": 300, "maxMs": 300,
                "histogram": histogram([300]),
                "culprits": [["culprit": "MyService.Feed.parse()", "count": 1, "maxMs": 300, "targets": ["main"]]],
                "targets": ["main": histogram([300, 150])],
            ],
            "diagnostics": [
                diagnostic(session: sessionB, atMs: b + 4_000, rssBytes: 70_000_000),
                diagnostic(session: sessionA, atMs: a + 400, rssBytes: 50_000_000),
            ],
            "truncated": NSNull(),
        ]
        if intervals { report["intervals"] = intervalBlocks() }
        return report
    }

    /// Session B's snapshot, then two of session A's (newest first) that overlap in one span.
    static func intervalBlocks() -> [[String: Any]] {
        [
            [
                "session": sessionB, "takenAt": ts(epochB + 5_000), "capacity": 4096, "recorded": 3,
                "epochUnixMs": epochB,
                "threads": [["tid": 5000, "name": "main"], ["tid": 5001, "name": hostile]],
                "spans": [
                    span(hostile, tid: 5001, startMs: 1.5, durationMs: 2.5, exit: "expired", budgetMs: 2),
                    span("api.get", tid: 5000, startMs: 3, durationMs: 0.8, exit: "cancelled", budgetMs: 25),
                    span("api.get", tid: 5000, startMs: 4, durationMs: 0.9, budgetMs: 25),
                ],
            ],
            [
                "session": sessionA, "takenAt": ts(epochA + 400), "capacity": 4096, "recorded": 6,
                "epochUnixMs": epochA,
                "threads": [
                    ["tid": 4242, "name": "main"], ["tid": 4250, "name": "db.pool"], ["tid": 4251, "name": "worker"],
                ],
                "spans": [
                    span("api.get", tid: 4242, startMs: 1, durationMs: 30, budgetMs: 25),
                    span("db.query", tid: 4242, startMs: 2, durationMs: 10, budgetMs: 50),
                    span("cache.fill", tid: 4250, startMs: 5, durationMs: 4, exit: "failure"),
                    span("sync.upload", tid: 4251, startMs: 8, durationMs: 120, exit: "orphaned", budgetMs: 100),
                    // Keyed: begun on main, overlapping api.get without nesting in it.
                    span("keyed.login", tid: 4242, startMs: 20, durationMs: 20, exit: "superseded"),
                ],
            ],
            [
                "session": sessionA, "takenAt": ts(epochA + 35), "capacity": 4096, "recorded": 2,
                "epochUnixMs": epochA, "threads": [["tid": 4242, "name": "main (older name)"]],
                "spans": [span("api.get", tid: 4242, startMs: 1, durationMs: 30, budgetMs: 25)],
            ],
        ]
    }

    static func diagnostic(session: String, atMs: Int64, rssBytes: Int) -> [String: Any] {
        [
            "session": session, "takenAt": ts(atMs), "reason": "periodic",
            "process": [
                "rssBytes": rssBytes, "peakRssBytes": rssBytes + 1_000_000, "cpuUserMs": 10, "cpuSystemMs": 2,
                "threads": 4, "openFds": 9,
            ],
        ]
    }

    static func bytes(_ object: [String: Any]) -> [UInt8] {
        [UInt8](try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// The fixture report's bytes.
    static func report(intervals: Bool = true) -> [UInt8] { bytes(reportObject(intervals: intervals)) }

    static func input(intervals: Bool = true) throws -> ExportInput {
        try ExportInput(bytes: report(intervals: intervals), path: "fixture.json")
    }

    /// Compares `bytes` with the golden file `name` in Fixtures/export (rewritten when
    /// `PERF_UPDATE_GOLDEN=1`).
    static func expectGolden(_ bytes: [UInt8], _ name: String) throws {
        let url = folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["PERF_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let golden = try [UInt8](Data(contentsOf: url))
        #expect(bytes == golden, "\(name) differs from \(url.path); if intended, rerun with PERF_UPDATE_GOLDEN=1")
    }

    /// Parses JSON bytes into a dictionary.
    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}
