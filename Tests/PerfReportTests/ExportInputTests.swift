// Reading reports for export: intervals, names, events and bounds; the timeline both trace
// formats draw; and seeded fuzzing of the reader and every renderer.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportInputTests {
    @Test func committedFixtureIsTheOneBuiltInCode() throws {
        try ExportFixture.expectGolden(ExportFixture.report(), "report.json")
    }

    @Test func intervalsAreUnixNanosecondsMergedAcrossSnapshots() throws {
        let input = try ExportFixture.input()
        #expect(input.hasIntervals)
        // Session A's two snapshots share api.get: eight spans, not nine.
        #expect(input.intervals.count == 8)
        let apiGet = try #require(
            input.intervals.first { $0.session == ExportFixture.sessionA && $0.name == "api.get" })
        #expect(apiGet.startUnixNanos == ExportFixture.epochA * 1_000_000 + 1_000_000)
        #expect(apiGet.durationNanos == 30_000_000)
        #expect(apiGet.threadID == 4242)
        #expect(apiGet.budgetMs == 25)
        let starts = input.intervals.map(\.startUnixNanos)
        #expect(starts == starts.sorted(), "oldest first")
        #expect(input.intervals.first { $0.name == "cache.fill" }?.budgetMs == nil, "no budget stays absent")
    }

    @Test func eventsCarryHangBoundsAndTheThreadID() throws {
        let input = try ExportFixture.input()
        let hang = try #require(input.events.first { $0.kind == "hang" })
        #expect(hang.threadID == 4242)
        #expect(hang.lowerMs == 280 && hang.upperMs == 320)
        #expect(hang.fatal)
        #expect(hang.startUnixNanos == (ExportFixture.epochA + 200) * 1_000_000)
        #expect(ExportReading.threadID("worker (tid 7) pool (tid 5001, state S)") == 5001, "the last (tid wins")
        #expect(ExportReading.threadID("no thread id") == nil)
        #expect(ExportTimeline.threadLabel("db (tid 1) pool (tid 5001, state S)") == "db (tid 1) pool")
    }

    @Test func olderReportHasNoIntervalsButStillTraceEvents() throws {
        let input = try ExportFixture.input(intervals: false)
        #expect(!input.hasIntervals)
        #expect(input.threads.isEmpty)
        #expect(input.hasTraceEvents, "its ledger spans, hangs and notes remain")
        var object = ExportFixture.reportObject(intervals: false)
        object["ledger"] = [
            "events": [ExportFixture.line("session", "start", session: "x", atMs: ExportFixture.epochA)]
        ]
        let bare = try ExportInput(bytes: ExportFixture.bytes(object), path: "bare.json")
        #expect(!bare.hasTraceEvents)
        #expect(!bare.spans.isEmpty, "histograms are still there for metrics")
    }

    @Test func outOfRangeTimesAreDroppedNotTrapped() throws {
        var object = ExportFixture.reportObject()
        object["intervals"] = [
            [
                "session": "s", "epochUnixMs": -5,
                "spans": [ExportFixture.span("neg", tid: 1, startMs: 0, durationMs: 1)],
            ],
            [
                "session": "s", "epochUnixMs": 9e15,
                "spans": [ExportFixture.span("far", tid: 1, startMs: 0, durationMs: 1)],
            ],
            [
                "session": "s", "epochUnixMs": ExportFixture.epochA,
                "spans": [
                    ["name": "huge", "tid": 1, "startNs": 9e30, "durationNs": 1],
                    ["name": "negative", "tid": 1, "startNs": 0, "durationNs": -1],
                    ["name": "ok", "tid": 1, "startNs": 0, "durationNs": 1],
                ],
            ],
        ]
        object["ledger"] = [
            "events": [
                ExportFixture.line("span", "endless", session: "s", atMs: ExportFixture.epochA, ["durationMs": 1e300]),
                ["kind": "note", "name": "1969", "session": "s", "ts": "1969-12-31T23:59:59.000Z"],
            ]
        ]
        let input = try ExportInput(bytes: ExportFixture.bytes(object), path: "bounds.json")
        #expect(input.intervals.map(\.name) == ["ok"])
        #expect(input.events.map(\.name) == ["endless"])
        #expect(input.events.first?.durationMs == nil, "an impossible duration reads as none")
    }

    @Test func timelineOrdersSessionsAndDropsLedgerSpansTheRingHolds() throws {
        let timeline = ExportTimeline(try ExportFixture.input())
        #expect(timeline.sessions.map(\.id) == [ExportFixture.sessionA, ExportFixture.sessionB])
        #expect(timeline.sessions.map(\.ordinal) == [1, 2])
        #expect(timeline.originUnixNanos == (ExportFixture.epochA - 200) * 1_000_000)
        let a = timeline.sessions[0]
        #expect(a.ledgerSpans.map(\.name) == ["boot"], "api.get is in the ring; boot is older than it")
        #expect(timeline.sessions[1].ledgerSpans.isEmpty)
        #expect(a.threadName(4242) == "main", "the newest snapshot names the thread")
        #expect(a.threadName(9) == "thread 9")
        #expect(a.status == "crashed")
        #expect(a.endUnixNanos == (ExportFixture.epochA + 500) * 1_000_000, "through the hang's end")
        let old = ExportTimeline(try ExportFixture.input(intervals: false))
        #expect(old.sessions[0].ledgerSpans.map(\.name) == ["boot", "api.get"], "without a ring every slow span shows")
        #expect(old.sessions[0].threadName(4242) == "main", "named from the hang line")
    }

    @Test func mutatedReportsNeverCrashTheReaderOrTheRenderers() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let original = ExportFixture.report()
        var rendered = 0
        let object = ExportFixture.reportObject()
        for round in 0..<300 {
            // Half the rounds damage bytes (mostly unreadable JSON), half damage values in a
            // readable report (wrong types, huge and negative numbers, hostile strings).
            let bytes =
                round.isMultiple(of: 2)
                ? ReportFuzzTests.mutate(original, using: &random)
                : ExportFixture.bytes(Self.mutate(object, using: &random) as? [String: Any] ?? object)
            guard let input = try? ExportInput(bytes: bytes, path: "fuzz.json") else { continue }
            let chrome = ChromeTraceExport.render(input)
            let otlp = OTLPExport.render(input)
            let metrics = PrometheusExport.render(input)
            #expect((try? JSONSerialization.jsonObject(with: Data(chrome))) != nil, "chrome is JSON (seed \(seed))")
            #expect((try? JSONSerialization.jsonObject(with: Data(otlp))) != nil, "otlp is JSON (seed \(seed))")
            #expect(PrometheusGrammar.problems(metrics).isEmpty, "prometheus grammar (seed \(seed))")
            rendered += 1
        }
        #expect(rendered >= 100, "seed \(seed)")
    }

    /// Replaces some leaves of a JSON value with values a damaged report could hold.
    static func mutate(_ value: Any, using random: inout SeededRandom) -> Any {
        if let object = value as? [String: Any] {
            return object.mapValues { mutate($0, using: &random) }
        }
        if let array = value as? [Any] {
            return array.map { mutate($0, using: &random) }
        }
        guard Int.random(in: 0..<12, using: &random) == 0 else { return value }
        let replacements: [Any] = [
            -1, 0, 1e300, -9e18, 9_223_372_036_854_775_807, 0.5, "", ExportFixture.hostile, "9999-12-31T23:59:59.999Z",
            NSNull(), true, [Any](), [String: Any](), "\u{FEFF}x",
        ]
        return replacements.randomElement(using: &random)!
    }
}
