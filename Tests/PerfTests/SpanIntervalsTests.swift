// The flight recorder's way out: wall-clock conversion, the payload round trip, the report's
// `intervals` block under the cap, and the facade's snapshots.
import CPerfShims
import Foundation
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SpanIntervalsTests {
    /// A ring of `count` spans 1 ms apart on two threads, read at monotonic `10 s`, wall `now`.
    private static func intervals(count: Int, capacity: Int = 64) -> SpanIntervals {
        let flight = FlightRecorder(capacity: capacity)!
        for index in 0..<count {
            flight.record(
                "interval.span", startNanos: 1_000_000_000 + UInt64(index) * 1_000_000, durationNanos: 250_000,
                budgetNanos: index.isMultiple(of: 2) ? 500_000 : nil, exit: index == 3 ? .failure : .success)
        }
        return SpanIntervals(
            snapshot: flight.snapshot(), capacity: flight.capacity, monotonicNanos: 10_000_000_000,
            wallNanos: 1_796_216_400_123_456_789, threadName: { "t\($0)" })
    }

    @Test func monotonicStartsBecomeWallTimesAfterAMillisecondEpoch() {
        let intervals = Self.intervals(count: 5)
        // The first span began 9 s before the reading: wall 1_796_216_391_123_456_789 ns.
        #expect(intervals.epochUnixMs == 1_796_216_391_123)
        #expect(intervals.spans.map(\.startNanos) == [456_789, 1_456_789, 2_456_789, 3_456_789, 4_456_789])
        #expect(intervals.spans.map(\.durationNanos) == Array(repeating: 250_000, count: 5))
        #expect(intervals.spans.map(\.budgetMs) == [0.5, nil, 0.5, nil, 0.5])
        #expect(intervals.spans[3].exit == "failure")
        #expect(intervals.recorded == 5)
        #expect(intervals.threads.count == 1)
        #expect(intervals.threads.values.first?.hasPrefix("t") == true)
    }

    @Test func payloadsCarryIntervalsAndOlderPayloadsHaveNone() throws {
        let intervals = Self.intervals(count: 40)
        let snapshot = DiagnosticSnapshot(
            session: "s1", takenAtMs: 1_796_216_400_123, reason: "on-demand", app: Perf.AppInfo(name: "a"),
            host: .current(), process: ProcessFigures(), spans: [:], hangs: [:], intervals: intervals)
        #expect(try DiagnosticSnapshot(jsonBytes: snapshot.jsonBytes) == snapshot)
        var older = snapshot
        older.intervals = nil
        let text = String(decoding: older.jsonBytes, as: UTF8.self)
        #expect(!text.contains("intervals"))
        #expect(try DiagnosticSnapshot(jsonBytes: older.jsonBytes).intervals == nil)
        // A damaged block costs only itself.
        let damaged = String(decoding: snapshot.jsonBytes, as: UTF8.self)
            .replacingOccurrences(of: "\"epochUnixMs\":", with: "\"epochUnixMsX\":")
        let parsed = try DiagnosticSnapshot(jsonBytes: Array(damaged.utf8))
        #expect(parsed.intervals == nil)
        #expect(parsed.session == "s1")
    }

    @Test func theReportKeepsTheNewestIntervalsThatFitTheCapAndCountsTheRest() throws {
        let directory = try TemporaryDirectory("intervals-cap")
        defer { directory.remove() }
        let intervals = Self.intervals(count: 4096, capacity: 4096)
        let snapshot = DiagnosticSnapshot(
            session: "abcdabcdabcdabcd", takenAtMs: 1_796_216_400_123, reason: "shutdown",
            app: Perf.AppInfo(name: "a"), host: .current(), process: ProcessFigures(), spans: [:], hangs: [:],
            intervals: intervals)
        let name = DiagnosticFiles.fileName(takenAtMs: snapshot.takenAtMs, session: snapshot.session)
        _ = try DiagnosticFiles.write(snapshot.jsonBytes, name: name, dataDirectory: directory.url.path)

        let whole = try ReportBuilder(directory: directory.url).build()
        let full = try #require(try JSONSerialization.jsonObject(with: Data(whole)) as? [String: Any])
        let blocks = try #require(full["intervals"] as? [[String: Any]])
        #expect((blocks.first?["spans"] as? [Any])?.count == 4096)
        #expect(full["truncated"] is NSNull)

        let cap = 160 * 1024
        let capped = try ReportBuilder(directory: directory.url, capBytes: cap).build()
        #expect(capped.count <= cap)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(capped)) as? [String: Any])
        let kept = try #require((report["intervals"] as? [[String: Any]])?.first?["spans"] as? [[String: Any]])
        #expect(kept.count > 100 && kept.count < 4096)
        let truncated = try #require(report["truncated"] as? [String: Any])
        #expect(truncated["intervalsOmitted"] as? Int == 4096 - kept.count)
        // The newest spans stay: the last one kept is the last one recorded.
        #expect(kept.last?["startNs"] as? Int == intervals.spans.last.map { Int($0.startNanos) })
        let read = try #require(
            try PerformanceReport(bytes: capped, path: "capped.json").intervals.first?.flightRecorder)
        #expect(read.spans.count == kept.count)
        #expect(read.epochUnixMs == intervals.epochUnixMs && read.spans.last == intervals.spans[4095])
    }
}

extension PerfGlobalStateTests {
    @Suite struct FlightRecorderFacadeTests {
        @Test func snapshotsCarryTheRecentSpansWithThisThreadsIdAndName() throws {
            let directory = try TemporaryDirectory("flight-facade")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "flight"), recording: .enabled,
                diagnosticsIntervalSeconds: 0, flightRecorderCapacity: 16)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            for _ in 0..<20 { Perf.begin("flight.fast", slowMs: 10_000).end() }
            Perf.begin("flight.slow", slowMs: 0).end(exit: .failure)
            let recent = try #require(Perf.recentSpans())
            #expect(recent.capacity == 16)
            #expect(recent.recorded == 21)
            #expect(recent.spans.count == 16)
            #expect(recent.spans.last?.name == "flight.slow")
            #expect(recent.spans.last?.exit == "failure")
            #expect(recent.spans.last?.budgetMs == 0)
            let tid = perf_gettid()
            #expect(recent.spans.allSatisfy { $0.threadID == tid })
            #expect(recent.threads[tid]?.isEmpty == false)
            let wall = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(abs(recent.epochUnixMs - wall) < 60_000)

            let url = try Perf.captureDiagnostics()
            let snapshot = try DiagnosticSnapshot(jsonBytes: [UInt8](Data(contentsOf: url)))
            #expect(snapshot.intervals?.spans.map(\.name).suffix(1) == ["flight.slow"])
            let report = try ReportBuilder(directory: directory.url).build()
            let read = try PerformanceReport(bytes: report, path: "report.json")
            let recorded = try #require(read.intervals.first?.flightRecorder)
            #expect(!recorded.spans.isEmpty)
            #expect(recorded.threads[tid] != nil)
        }

        @Test func aZeroCapacityKeepsNoRing() throws {
            let configuration = Perf.Configuration(recording: .disabled, flightRecorderCapacity: 0)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            Perf.begin("flight.none", slowMs: 1).end()
            #expect(Perf.recentSpans() == nil)
        }
    }
}
