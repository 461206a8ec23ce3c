// Parent and child spans in the trace exports: an OTLP span whose line names its parent's scope
// gets the parent's span id, and a Chrome slice is drawn inside its parent, on its lane when it
// fits there, else joined to it by a flow arrow.
import Foundation
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportNestingTests {
    typealias F = SpanProfileFixture

    @Test func anOTLPChildNamesItsParentsSpanID() throws {
        let document = try ExportFixture.json(OTLPExport.render(try F.exportInput()))
        let resource = try #require((document["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require((resource["scopeSpans"] as? [[String: Any]])?.first?["spans"] as? [[String: Any]])
        let id = { ExportIDs.spanID(session: F.session, index: $0) }
        // Root, then by start: api.get (scope 7), its db.query, api.get (scope 9), a db.query
        // whose parent (scope 5) wrote no line.
        #expect(spans.map { $0["name"] as? String } == ["session", "api.get", "db.query", "api.get", "db.query"])
        #expect(spans.map { $0["spanId"] as? String } == (0...4).map(id))
        #expect(spans.dropFirst().map { $0["parentSpanId"] as? String } == [id(0), id(1), id(0), id(0)])
        let selfMs = try #require(spans[1]["attributes"] as? [[String: Any]]).first {
            $0["key"] as? String == "perf.self_ms"
        }
        #expect((selfMs?["value"] as? [String: Any])?["doubleValue"] as? Double == 380)
    }

    @Test func aChromeChildSitsInsideItsParentOnItsLane() throws {
        let document = try ExportFixture.json(ChromeTraceExport.render(try F.exportInput()))
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let slices = events.filter { $0["ph"] as? String == "X" }
        #expect(slices.map { $0["name"] as? String } == ["api.get", "db.query", "api.get", "db.query"])
        let parent = slices[0]
        let child = slices[1]
        #expect(child["tid"] as? Int == parent["tid"] as? Int, "the same lane")
        let (parentStart, parentDuration) = (
            try #require(parent["ts"] as? Double), try #require(parent["dur"] as? Double)
        )
        #expect(parentStart == 0 && parentDuration == 500_000)
        #expect(child["ts"] as? Double == 340_000 && child["dur"] as? Double == 60_000)
        let parentArgs = try #require(parent["args"] as? [String: Any])
        #expect(parentArgs["scope"] as? Int == 7 && parentArgs["selfMs"] as? Double == 380)
        #expect((parentArgs["children"] as? [[String: Any]])?.first?["name"] as? String == "db.query")
        #expect((child["args"] as? [String: Any])?["parentScope"] as? Int == 7)
        #expect(!events.contains { ["s", "f"].contains($0["ph"] as? String) }, "no flows when every child nests")
    }

    /// A ledger span line at `endMs` after the origin.
    static func line(_ name: String, endMs: Int64, durationMs: Double, _ extra: [String: LedgerValue])
        -> PerformanceReport.Event
    {
        var event = PerformanceReport.Event(
            kind: .span, name: name, session: "s", timestamp: .init(unixMs: F.t0 + endMs))
        event.durationMs = durationMs
        event.extra = extra
        return event
    }

    @Test func aChildForcedOntoAnotherLaneIsJoinedByAFlow() throws {
        // A [0, 100] and B [50, 200] overlap, so B takes lane 1. B's children C1 [60, 90] and
        // C2 [70, 100] overlap each other: C1 nests in B; C2 cannot, and lands on lane 0 (inside A).
        let report = PerformanceReport(
            ledger: .init(events: [
                Self.line("A", endMs: 100, durationMs: 100, ["scope": .int(1)]),
                Self.line("B", endMs: 200, durationMs: 150, ["scope": .int(2)]),
                Self.line("C1", endMs: 90, durationMs: 30, ["parentScope": .int(2)]),
                Self.line("C2", endMs: 100, durationMs: 30, ["parentScope": .int(2)]),
            ]))
        let document = try ExportFixture.json(ChromeTraceExport.render(ExportInput(report: report, path: "r.json")))
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let lane0 = Int(ChromeTraceEvents.syntheticThreadBase)
        let lane1 = lane0 + 1
        let tids = Dictionary(
            uniqueKeysWithValues: events.filter { $0["ph"] as? String == "X" }.map {
                ($0["name"] as? String ?? "", $0["tid"] as? Int ?? -1)
            })
        #expect(tids == ["A": lane0, "B": lane1, "C1": lane1, "C2": lane0])
        let flows = events.filter { ["s", "f"].contains($0["ph"] as? String) }
        #expect(flows.count == 2)
        #expect(flows.map { $0["ph"] as? String } == ["s", "f"])
        #expect(flows.map { $0["id"] as? Int } == [1, 1])
        #expect(flows.map { $0["tid"] as? Int } == [lane1, lane0])
        #expect(flows.map { $0["ts"] as? Double } == [50_000, 70_000])
        #expect(flows[1]["bp"] as? String == "e" && flows[0]["bp"] == nil)
        #expect(flows.allSatisfy { $0["name"] as? String == "C2" && $0["cat"] as? String == "child" })
    }

    @Test func aChildThatSeemsToStartBeforeItsParentIsMovedInside() throws {
        // Millisecond `ts`: the child's computed start lies 1 ms before its parent's.
        let report = PerformanceReport(
            ledger: .init(events: [
                Self.line("parent", endMs: 100, durationMs: 50, ["scope": .int(3)]),
                Self.line("child", endMs: 60, durationMs: 11, ["parentScope": .int(3)]),
            ]))
        let document = try ExportFixture.json(ChromeTraceExport.render(ExportInput(report: report, path: "r.json")))
        let slices = try #require(document["traceEvents"] as? [[String: Any]]).filter { $0["ph"] as? String == "X" }
        #expect(slices.map { $0["name"] as? String } == ["parent", "child"])
        // The origin is the child's computed start; the child is drawn 1 ms later, at its parent's.
        #expect(slices.map { $0["ts"] as? Double } == [1_000, 1_000])
        #expect(slices[0]["tid"] as? Int == slices[1]["tid"] as? Int)
    }

    /// A parent on thread 1 and its child on thread 2 (a child task), both in the flight
    /// recorder; their ledger lines, which the ring covers, carry the scopes.
    static func ringReport(childDurationMs: Double = 30) -> PerformanceReport {
        let ring = SpanIntervals(
            capacity: 16, recorded: 2, epochUnixMs: F.t0, threads: [1: "main", 2: "worker"],
            spans: [
                .init(name: "P", threadID: 1, startNanos: 0, durationNanos: 100_000_000, budgetMs: 50),
                .init(name: "C", threadID: 2, startNanos: 20_000_000, durationNanos: 30_000_000, budgetMs: 20),
            ])
        return PerformanceReport(
            ledger: .init(events: [
                line("C", endMs: 50, durationMs: childDurationMs, ["parentScope": .int(4)]),
                line("P", endMs: 100, durationMs: 100, ["scope": .int(4)]),
            ]),
            intervals: [.init(session: "s", flightRecorder: ring)])
    }

    @Test func flightRecorderSpansTakeTheScopesOfTheLinesThatDescribeThem() throws {
        let input = ExportInput(report: Self.ringReport(), path: "r.json")
        let otlp = try ExportFixture.json(OTLPExport.render(input))
        let resource = try #require((otlp["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require((resource["scopeSpans"] as? [[String: Any]])?.first?["spans"] as? [[String: Any]])
        let id = { ExportIDs.spanID(session: "s", index: $0) }
        #expect(spans.map { $0["name"] as? String } == ["session", "P", "C"], "the ledger lines are covered")
        #expect(spans.map { $0["parentSpanId"] as? String } == [nil, id(0), id(1)])

        let chrome = try ExportFixture.json(ChromeTraceExport.render(input))
        let events = try #require(chrome["traceEvents"] as? [[String: Any]])
        let tids = Dictionary(
            uniqueKeysWithValues: events.filter { $0["ph"] as? String == "X" }.map {
                ($0["name"] as? String ?? "", $0["tid"] as? Int ?? -1)
            })
        #expect(tids == ["P": 1, "C": 2])
        let flows = events.filter { ["s", "f"].contains($0["ph"] as? String) }
        #expect(flows.map { $0["ph"] as? String } == ["s", "f"])
        #expect(flows.map { $0["tid"] as? Int } == [1, 2])
        #expect(flows.map { $0["ts"] as? Double } == [0, 20_000])
    }

    @Test func aLineThatDoesNotMatchItsRingSpanLinksNothing() throws {
        // The child's line says 35 ms where the ring holds 30 ms: not the same span.
        let input = ExportInput(report: Self.ringReport(childDurationMs: 35), path: "r.json")
        let otlp = try ExportFixture.json(OTLPExport.render(input))
        let resource = try #require((otlp["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require((resource["scopeSpans"] as? [[String: Any]])?.first?["spans"] as? [[String: Any]])
        let root = ExportIDs.spanID(session: "s", index: 0)
        #expect(spans.dropFirst().map { $0["parentSpanId"] as? String } == [root, root])
        let chrome = String(decoding: ChromeTraceExport.render(input), as: UTF8.self)
        #expect(!chrome.contains("\"ph\":\"s\""))
    }
}
