// The Chrome trace export: required fields, sorting, nesting per lane, units, metadata, where
// hangs, notes and memory go, lanes for overlapping spans, and a golden file.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportChromeTests {
    static func trace(intervals: Bool = true) throws -> (document: [String: Any], events: [[String: Any]]) {
        let document = try ExportFixture.json(
            ChromeTraceExport.render(try ExportFixture.input(intervals: intervals)))
        return (document, try #require(document["traceEvents"] as? [[String: Any]]))
    }

    static func number(_ value: Any?) -> Double { (value as? NSNumber)?.doubleValue ?? .nan }

    @Test func fixtureMatchesTheGoldenFile() throws {
        try ExportFixture.expectGolden(ChromeTraceExport.render(try ExportFixture.input()), "golden.chrome.json")
    }

    @Test(arguments: [true, false])
    func everyEventHasTheRequiredFieldsSortedAndNested(intervals: Bool) throws {
        let (document, events) = try Self.trace(intervals: intervals)
        #expect(document["displayTimeUnit"] as? String == "ms")
        var lastTimed = -1.0
        var seenTimed = false
        // In integer nanoseconds, as Perfetto's importer reads them.
        var lanes: [String: [(start: Int64, end: Int64)]] = [:]
        for event in events {
            let phase = try #require(event["ph"] as? String)
            #expect(["X", "i", "C", "M"].contains(phase))
            #expect(event["name"] is String && event["pid"] is Int && event["tid"] is Int && event["ts"] is NSNumber)
            let ts = Self.number(event["ts"])
            #expect(ts >= 0)
            if phase == "M" {
                #expect(!seenTimed, "metadata comes first")
                continue
            }
            seenTimed = true
            #expect(ts >= lastTimed, "sorted by ts")
            lastTimed = ts
            if phase == "X" {
                let duration = Self.number(event["dur"])
                #expect(duration >= 0)
                let start = Int64((ts * 1_000).rounded())
                lanes["\(event["pid"]!)/\(event["tid"]!)", default: []].append(
                    (start, start + Int64((duration * 1_000).rounded())))
            }
            if phase == "i" { #expect(["t", "p"].contains(event["s"] as? String)) }
        }
        for (lane, slices) in lanes {
            var open: [Int64] = []
            for slice in slices.sorted(by: { ($0.start, -$0.end) < ($1.start, -$1.end) }) {
                while let end = open.last, end <= slice.start { open.removeLast() }
                #expect(open.last.map { slice.end <= $0 } ?? true, "lane \(lane): \(slice) overlaps without nesting")
                open.append(slice.end)
            }
        }
    }

    @Test func processesAndLanesAreNamed() throws {
        let (_, events) = try Self.trace()
        let metadata = events.filter { $0["ph"] as? String == "M" }
        let processNames = metadata.filter { $0["name"] as? String == "process_name" }
            .map { ($0["pid"] as? Int ?? 0, ($0["args"] as? [String: Any])?["name"] as? String ?? "") }
        #expect(processNames.map(\.0) == [1, 2])
        #expect(processNames[0].1 == "my\"service 1.4.0 (build 812) · session \(ExportFixture.sessionA) · crashed")
        #expect(processNames[1].1.hasSuffix("session \(ExportFixture.sessionB) · terminated"))
        let threadNames = Dictionary(
            metadata.filter { $0["name"] as? String == "thread_name" }
                .map { ("\($0["pid"]!)/\($0["tid"]!)", ($0["args"] as? [String: Any])?["name"] as? String ?? "") },
            uniquingKeysWith: { first, _ in first })
        #expect(threadNames["1/4242"] == "main")
        #expect(threadNames["1/4250"] == "db.pool")
        #expect(threadNames["2/5001"] == ExportFixture.hostile)
        let laned = Set(events.filter { $0["ph"] as? String == "X" }.map { "\($0["pid"]!)/\($0["tid"]!)" })
        #expect(laned.isSubset(of: Set(threadNames.keys)), "every lane is named")
        // keyed.login overlaps api.get on main without nesting: it has a lane of its own.
        let keyed = try #require(events.first { $0["name"] as? String == "keyed.login" })
        #expect(keyed["tid"] as? Int ?? 0 >= ChromeTraceEvents.syntheticThreadBase)
        #expect(threadNames["1/\(keyed["tid"]!)"] == "main (overlapping 1)")
    }

    @Test func spansAreMicrosecondsAfterTheOriginWithTheirOutcome() throws {
        let (document, events) = try Self.trace()
        let other = try #require(document["otherData"] as? [String: Any])
        #expect(other["originUnixNanos"] as? String == String((ExportFixture.epochA - 200) * 1_000_000))
        let apiGet = try #require(events.first { $0["name"] as? String == "api.get" && $0["pid"] as? Int == 1 })
        #expect(Self.number(apiGet["ts"]) == 201_000, "200 ms from session start to the ring's epoch, then 1 ms")
        #expect(Self.number(apiGet["dur"]) == 30_000)
        let args = try #require(apiGet["args"] as? [String: Any])
        #expect(
            args["exit"] as? String == "success" && args["budgetMs"] as? Int == 25
                && args["overBudget"] as? Bool == true)
        let cache = try #require(events.first { $0["name"] as? String == "cache.fill" })
        #expect((cache["args"] as? [String: Any])?["exit"] as? String == "failure")
        #expect((cache["args"] as? [String: Any])?["budgetMs"] == nil)
        #expect(
            events.filter { $0["name"] as? String == "api.get" && $0["cat"] as? String == "ledger" }.isEmpty,
            "the ledger's api.get is the ring's, drawn once")
        let boot = try #require(events.first { $0["name"] as? String == "boot" })
        #expect(boot["cat"] as? String == "ledger")
        #expect(Self.number(boot["dur"]) == 40_500)
    }

    @Test func hangsNotesAndMemorySitWhereTheyHappened() throws {
        let (_, events) = try Self.trace()
        let hang = try #require(events.first { $0["cat"] as? String == "hang" && $0["pid"] as? Int == 1 })
        #expect(hang["ph"] as? String == "X" && hang["tid"] as? Int == 4242 && hang["name"] as? String == "hang main")
        #expect(Self.number(hang["dur"]) == 300_000)
        let args = try #require(hang["args"] as? [String: Any])
        #expect(args["culprit"] as? String == "MyService.Feed.parse()" && args["fatal"] as? Bool == true)
        #expect(args["lowerMs"] as? Int == 280 && args["upperMs"] as? Int == 320)
        let hitch = try #require(events.first { $0["name"] as? String == "hitch main" })
        #expect(hitch["pid"] as? Int == 2 && hitch["tid"] as? Int == 5000)
        let instants = events.filter { $0["ph"] as? String == "i" }
        #expect(
            Set(instants.compactMap { $0["name"] as? String }) == [
                "socket.reconnect", "overdue sync.upload", "note \"quoted\"",
            ])
        let counters = events.filter { $0["ph"] as? String == "C" }
        #expect(
            counters.compactMap { ($0["args"] as? [String: Any])?["rssBytes"] as? Int } == [50_000_000, 70_000_000])
    }

    @Test func outputIsDeterministic() throws {
        let input = try ExportFixture.input()
        #expect(ChromeTraceExport.render(input) == ChromeTraceExport.render(input))
        let reread = try ExportInput(bytes: ExportFixture.report(), path: "other.json")
        #expect(ChromeTraceExport.render(reread) == ChromeTraceExport.render(input))
    }

    @Test func lanesNestAndMoveSlicesOnlyWithinTheirSlack() {
        let lanes = ChromeTraceLanes.assign([
            .init(start: 0, duration: 100), .init(start: 10, duration: 20), .init(start: 50, duration: 80),
            .init(start: 130, duration: 10), .init(start: 199, duration: 10, slack: 0),
            .init(start: 205, duration: 5, slack: 5),
        ])
        #expect(lanes.map(\.lane) == [0, 0, 1, 0, 0, 0])
        #expect(lanes[5].start == 209, "moved after the slice it overlapped by less than its slack")
    }

    @Test func randomSlicesAlwaysNestOnEveryLane() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        for _ in 0..<50 {
            let slices = (0..<60).map { _ in
                ChromeTraceLanes.Slice(
                    start: Int64.random(in: 0...1_000, using: &random),
                    duration: Int64.random(in: 0...300, using: &random),
                    slack: Int64.random(in: 0...3, using: &random))
            }.sorted { ($0.start, -$0.duration) < ($1.start, -$1.duration) }
            let placements = ChromeTraceLanes.assign(slices)
            for lane in Set(placements.map(\.lane)) {
                let placed = zip(slices, placements).filter { $0.1.lane == lane }
                    .map { (start: $0.1.start, end: $0.1.start + $0.0.duration) }
                    .sorted { ($0.start, -$0.end) < ($1.start, -$1.end) }
                var open: [Int64] = []
                for slice in placed {
                    while let end = open.last, end <= slice.start { open.removeLast() }
                    #expect(open.last.map { slice.end <= $0 } ?? true, "lane \(lane) does not nest (seed \(seed))")
                    open.append(slice.end)
                }
            }
            for (slice, placement) in zip(slices, placements) {
                #expect(placement.start >= slice.start && placement.start - slice.start <= slice.slack, "seed \(seed)")
            }
        }
    }
}
