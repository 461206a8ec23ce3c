// Where each span figure of the report comes from: one source per session. A session with a
// snapshot of the name counts its histogram (plus its lines the snapshot cannot hold), any other
// session counts its ledger lines, and count and overBudget are summed over the same sessions.
import Foundation
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

/// A data directory written from ledger lines and snapshots, and the report built from it.
enum SourcingFixture {
    /// 2026-12-02T12:00:00.000Z.
    static let t0: Int64 = 1_796_212_800_000
    static let survivor = "5a5a5a5a5a5a5a5a"
    static let crashed = "c0c0c0c0c0c0c0c0"

    static func span(
        _ name: String, session: String, atMs: Int64, durationMs: Double?, budgetMs: Double? = 100,
        exit: String = "success", lowerMs: Double? = nil
    ) -> LedgerEvent {
        var event = LedgerEvent(kind: .span, name: name, session: session, timestampMs: atMs)
        event.durationMs = durationMs
        event.budgetMs = budgetMs
        event.exit = exit
        event.lowerMs = lowerMs
        return event
    }

    /// `count` copies of one line, a millisecond apart from `atMs`.
    static func spans(
        _ count: Int, _ name: String, session: String, atMs: Int64, durationMs: Double, budgetMs: Double? = 100
    ) -> [LedgerEvent] {
        (0..<count).map {
            span(name, session: session, atMs: atMs + Int64($0), durationMs: durationMs, budgetMs: budgetMs)
        }
    }

    static func histogram(_ millis: [Double]) -> Perf.Histogram {
        var histogram = Perf.Histogram()
        for ms in millis { histogram.record(nanos: UInt64(ms * 1_000_000)) }
        return histogram
    }

    static func snapshot(session: String, takenAtMs: Int64, spans: [String: [Double]]) -> DiagnosticSnapshot {
        DiagnosticSnapshot(
            session: session, takenAtMs: takenAtMs, reason: "periodic", app: Perf.AppInfo(name: "app"),
            host: .current(), process: ProcessFigures(), spans: spans.mapValues(histogram), hangs: [:])
    }

    /// `snapshot` with a flight-recorder block holding one span per `(name, budgetMs)`, oldest first.
    static func snapshot(
        session: String, takenAtMs: Int64, spans: [String: [Double]], intervals: [(String, Double?)]
    ) -> DiagnosticSnapshot {
        var snapshot = snapshot(session: session, takenAtMs: takenAtMs, spans: spans)
        snapshot.intervals = SpanIntervals(
            capacity: 64, recorded: UInt64(intervals.count), epochUnixMs: takenAtMs - 1_000, threads: [1: "main"],
            spans: intervals.enumerated().map { index, span in
                SpanIntervals.Span(
                    name: span.0, threadID: 1, startNanos: Int64(index) * 1_000_000, durationNanos: 500_000,
                    budgetMs: span.1)
            })
        return snapshot
    }

    /// Writes `lines` as the ledger and `snapshots` as payloads, and reads the built report back.
    static func report(lines: [LedgerEvent], snapshots: [DiagnosticSnapshot]) throws -> PerformanceReport {
        let directory = try TemporaryDirectory("report-sourcing")
        defer { directory.remove() }
        var bytes: [UInt8] = []
        for line in lines { LedgerEncoder.encodeLine(line, into: &bytes) }
        try Data(bytes).write(to: directory.file(LedgerWriter.fileName))
        let folder = directory.file(DiagnosticFiles.directoryName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for snapshot in snapshots {
            let name = DiagnosticFiles.fileName(takenAtMs: snapshot.takenAtMs, session: snapshot.session)
            try Data(snapshot.jsonBytes).write(to: folder.appendingPathComponent(name))
        }
        let built = try ReportBuilder(directory: directory.url).build()
        return try PerformanceReport(bytes: built, path: "sourcing.json")
    }
}

@Suite struct ReportSourcingTests {
    typealias F = SourcingFixture

    /// The reported case: `db.loadUser 200 calls · 134 over`, where the 200 calls were the
    /// surviving session's and the over-budget lines mostly the crashed one's.
    @Test func aCrashedSessionWithoutASnapshotAddsItsLinesToTheSurvivorsHistogram() throws {
        let taken = F.t0 + 60_000
        // The survivor's 200 calls, 30 of them over budget (each of those also a ledger line).
        let survivorCalls = Array(repeating: 20.0, count: 170) + Array(repeating: 250.0, count: 30)
        var lines = F.spans(30, "db.loadUser", session: F.survivor, atMs: F.t0 + 1_000, durationMs: 250)
        // The crashed session: 134 lines, 120 over budget, and no snapshot.
        lines += F.spans(120, "db.loadUser", session: F.crashed, atMs: F.t0 + 2_000, durationMs: 300)
        lines += F.spans(14, "db.loadUser", session: F.crashed, atMs: F.t0 + 3_000, durationMs: 50, budgetMs: nil)
        let report = try F.report(
            lines: lines,
            snapshots: [F.snapshot(session: F.survivor, takenAtMs: taken, spans: ["db.loadUser": survivorCalls])])
        let span = try #require(report.spans["db.loadUser"])
        #expect(span.count == 200 + 134, "the snapshot's calls plus the ledger-only session's lines")
        #expect(span.overBudget == 30 + 120, "both sessions' over-budget lines")
        #expect(span.overBudget <= span.count)
        #expect(span.source == .histogram)
        #expect(span.ledgerOnlySessions == 1)
        #expect(span.histogram?.count == 334, "every counted call with a duration is in the distribution")
        #expect(span.maxMs == 300)
        #expect(span.orphaned == nil && span.orphanedLowerMs == nil)
    }

    @Test func aSnapshotThatPredatesSomeOfItsSessionsLinesGetsThemAdded() throws {
        let taken = F.t0 + 60_000
        // 50 calls up to the snapshot, four of them over budget and so also ledger lines (the
        // last one ended in the snapshot's millisecond: inside it).
        let calls = Array(repeating: 10.0, count: 46) + Array(repeating: 150.0, count: 4)
        var lines = F.spans(3, "api.get", session: F.survivor, atMs: F.t0 + 1_000, durationMs: 150)
        lines.append(F.span("api.get", session: F.survivor, atMs: taken, durationMs: 150))
        // Four more after the snapshot: not in its histogram.
        lines += F.spans(4, "api.get", session: F.survivor, atMs: taken + 1, durationMs: 400)
        let report = try F.report(
            lines: lines, snapshots: [F.snapshot(session: F.survivor, takenAtMs: taken, spans: ["api.get": calls])])
        let span = try #require(report.spans["api.get"])
        #expect(span.count == 54)
        #expect(span.overBudget == 8)
        #expect(span.histogram?.count == 54)
        #expect(span.maxMs == 400)
        #expect(span.source == .histogram)
        #expect(span.ledgerOnlySessions == nil, "the one session counted from its snapshot")
    }

    @Test func aSessionWhoseSnapshotLacksTheNameCountsItsLines() throws {
        let taken = F.t0 + 60_000
        let lines = F.spans(2, "cache.fill", session: F.survivor, atMs: F.t0 + 1_000, durationMs: 120)
        let report = try F.report(
            lines: lines, snapshots: [F.snapshot(session: F.survivor, takenAtMs: taken, spans: ["api.get": [1, 2]])])
        let span = try #require(report.spans["cache.fill"])
        #expect(span.count == 2 && span.overBudget == 2)
        #expect(span.source == .ledger)
        #expect(span.ledgerOnlySessions == nil, "only written beside a histogram source")
        #expect(report.spans["api.get"]?.count == 2)
    }

    @Test func linesWithoutASessionIdAreASessionOfTheirOwn() throws {
        let taken = F.t0 + 60_000
        let lines =
            F.spans(2, "api.get", session: "", atMs: F.t0 + 1_000, durationMs: 500)
            + F.spans(1, "api.get", session: F.survivor, atMs: F.t0 + 2_000, durationMs: 150)
        let report = try F.report(
            lines: lines,
            snapshots: [
                F.snapshot(
                    session: F.survivor, takenAtMs: taken, spans: ["api.get": Array(repeating: 5, count: 9) + [150]])
            ])
        let span = try #require(report.spans["api.get"])
        #expect(span.count == 10 + 2)
        #expect(span.overBudget == 3)
        #expect(span.ledgerOnlySessions == 1)
    }

    /// Spans the crashed process left open: never in a histogram, even one of a snapshot taken
    /// after they began (recovery's), so each counts as a call; a bound is a lower one.
    @Test func orphanedLinesCountAsCallsAndTellTheLongestKnownOpenTime() throws {
        let taken = F.t0 + 60_000
        let lines = [
            F.span(
                "sync.upload", session: F.crashed, atMs: F.t0 + 1_000, durationMs: 5_200, budgetMs: 5_000,
                exit: "orphaned", lowerMs: 5_200),
            F.span(
                "sync.upload", session: F.crashed, atMs: F.t0 + 2_000, durationMs: 1_200, budgetMs: 5_000,
                exit: "orphaned", lowerMs: 1_200),
            F.span("sync.upload", session: F.crashed, atMs: F.t0 + 3_000, durationMs: nil, exit: "orphaned"),
        ]
        let recovered = F.snapshot(
            session: F.crashed, takenAtMs: taken, spans: ["sync.upload": Array(repeating: 50, count: 10)])
        let report = try F.report(lines: lines, snapshots: [recovered])
        let span = try #require(report.spans["sync.upload"])
        #expect(span.count == 10 + 3)
        #expect(span.orphaned == 3)
        #expect(span.orphanedLowerMs == 5_200)
        #expect(span.histogram?.count == 12, "the two bounds are in the distribution, the unknown one is not")
        #expect(span.maxMs == 5_200)
        #expect(span.overBudget == 1, "open at least 5.2 s under a 5 s budget is over it")
        #expect(span.source == .histogram)
    }

    @Test func anOrphanWithoutADurationAddsNoneAndOldLinesHaveNoBound() throws {
        let lines = [
            F.span("socket.session", session: F.crashed, atMs: F.t0 + 1_000, durationMs: nil, exit: "orphaned"),
            F.span("db.migrate", session: F.crashed, atMs: F.t0 + 1_000, durationMs: nil, exit: "orphaned"),
            F.span(
                "db.migrate", session: F.crashed, atMs: F.t0 + 2_000, durationMs: nil, exit: "orphaned",
                lowerMs: 900),
        ]
        let report = try F.report(lines: lines, snapshots: [])
        let old = try #require(report.spans["socket.session"])
        #expect(old.count == 1 && old.orphaned == 1 && old.orphanedLowerMs == nil)
        #expect(old.histogram?.isEmpty == true && old.source == .ledger)
        let bounded = try #require(report.spans["db.migrate"])
        #expect(bounded.count == 2 && bounded.orphaned == 2 && bounded.orphanedLowerMs == 900)
        #expect(bounded.histogram?.isEmpty == true, "a bound without durationMs is not a duration")
    }

    /// A span never over its budget writes no ledger line, but the flight recorder keeps its
    /// budget: the report takes the newest snapshot's newest one, and a ledger line's wins.
    @Test func aBudgetNoLedgerLineToldComesFromTheNewestIntervals() throws {
        let older = F.snapshot(
            session: F.crashed, takenAtMs: F.t0 + 30_000, spans: ["feed.load": [2, 3]],
            intervals: [("feed.load", 40), ("feed.load", nil)])
        let newer = F.snapshot(
            session: F.survivor, takenAtMs: F.t0 + 60_000, spans: ["feed.load": [4], "api.get": [1]],
            intervals: [("feed.load", 50), ("feed.load", 80), ("api.get", 250), ("log.flush", nil)])
        let lines = [F.span("api.get", session: F.survivor, atMs: F.t0 + 61_000, durationMs: 300, budgetMs: 200)]
        let report = try F.report(lines: lines, snapshots: [older, newer])
        let feed = try #require(report.spans["feed.load"])
        #expect(feed.budgetMs == 80, "the newest snapshot's newest span of the name")
        #expect(feed.sites.isEmpty, "intervals carry no call sites")
        #expect(feed.overBudget == 0)
        #expect(report.spans["api.get"]?.budgetMs == 200, "a ledger line's budget wins")
        #expect(report.spans["log.flush"] == nil, "intervals alone make no span entry")
    }

    /// A span never over its budget writes no ledger line; the snapshots keep where each name's
    /// first span of a session began, and the report lists those with its ledger lines' sites.
    @Test func callSitesOfSpansThatNeverBreachedComeFromTheSnapshots() throws {
        var older = F.snapshot(session: F.crashed, takenAtMs: F.t0 + 30_000, spans: ["feed.load": [2]])
        older.spanSites = ["feed.load": ["App/Feed.swift:12"]]
        var newer = F.snapshot(
            session: F.survivor, takenAtMs: F.t0 + 60_000, spans: ["feed.load": [4], "api.get": [1]])
        newer.spanSites = [
            "feed.load": ["App/Feed.swift:12", "App/Prefetch.swift:40"], "api.get": ["App/API.swift:7"],
        ]
        var line = F.span("api.get", session: F.survivor, atMs: F.t0 + 61_000, durationMs: 300, budgetMs: 200)
        line.site = "App/API.swift:9"
        let report = try F.report(lines: [line], snapshots: [older, newer])
        #expect(report.spans["feed.load"]?.sites == ["App/Feed.swift:12", "App/Prefetch.swift:40"])
        #expect(report.spans["api.get"]?.sites == ["App/API.swift:7", "App/API.swift:9"])
    }

    @Test func anIntervalBudgetOfAnOlderSessionStandsWhenNewerSnapshotsLackTheName() throws {
        let older = F.snapshot(
            session: F.crashed, takenAtMs: F.t0 + 30_000, spans: ["feed.load": [2]],
            intervals: [("feed.load", 40)])
        let newer = F.snapshot(
            session: F.survivor, takenAtMs: F.t0 + 60_000, spans: ["feed.load": [4]], intervals: [("api.get", 9)])
        let report = try F.report(lines: [], snapshots: [older, newer])
        #expect(report.spans["feed.load"]?.budgetMs == 40)
        #expect(report.spans["feed.load"]?.count == 2)
    }

    @Test func pairsPastTheBoundStillCountInTheirNamesFigures() {
        var digest = LedgerDigest(keepBytes: 1 << 16, spanSessionBound: 2)
        for (index, session) in ["s1", "s2", "s3", "s3"].enumerated() {
            digest.add(F.span("api.get", session: session, atMs: F.t0 + Int64(index), durationMs: 200))
        }
        let lines = digest.spans["api.get"]
        #expect(lines?.sessions.count == 2)
        #expect(lines?.untracked.lines == 2)
        #expect(lines?.total.lines == 4 && lines?.total.added == 4 && lines?.total.overBudget == 4)
        #expect(lines?.durations.count == 4)
        #expect(digest.spanSessionPairs == 2 && digest.untrackedSpanLines == 2)
    }
}
