// The summary's top cause of a slow span name: the (wait, culprit) pair with the most samples
// over all the name's profiled lines, as a share of them, under the name's row and in the JSON.
import Foundation
import PerfCore
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct SpanCauseTests {
    static func line(_ name: String, _ top: [SpanProfile.Stack]) -> PerformanceReport.Event {
        var event = PerformanceReport.Event(
            kind: .span, name: name, session: "s", timestamp: .init(unixMs: 1_796_000_000_000))
        event.durationMs = 200
        event.extra["profile"] =
            SpanProfile(samples: top.reduce(0) { $0 + $1.count }, intervalMs: 10, top: top)
            .ledgerValue
        return event
    }

    @Test func theTopCauseOfTheFixtureIsTheReadOverBothLines() throws {
        let summary = ReportSummary(report: try SpanProfileFixture.report(), path: "profiles.json")
        let row = try #require(summary.spans.first { $0.name == "api.get" })
        let cause = try #require(row.topCause)
        #expect(
            cause
                == SpanCause(
                    wait: SpanProfileFixture.readWait, culprit: "App.Store.load(id:)", samples: 45, totalSamples: 70))
        #expect(cause.percent == 64)
        #expect(summary.spans.first { $0.name == "db.query" }?.topCause == nil)
        let lines = summary.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("  api.get ") })
        #expect(
            lines[index + 1]
                == "    top cause: 64 % read(fd 7 → socket 127.0.0.1:5432) in App.Store.load(id:) (45 of 70 samples)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        let spans = try #require(json["spans"] as? [[String: Any]])
        let top = try #require(spans.first { $0["name"] as? String == "api.get" }?["topCause"] as? [String: Any])
        #expect(top["samples"] as? Int == 45 && top["totalSamples"] as? Int == 70 && top["percent"] as? Int == 64)
        #expect(top["wait"] as? String == SpanProfileFixture.readWait)
        #expect(top["culprit"] as? String == "App.Store.load(id:)")
        #expect(spans.first { $0["name"] as? String == "db.query" }?["topCause"] == nil)
    }

    @Test func aRunningCauseSaysRunning() throws {
        let causes = SpanCause.top(of: [
            Self.line(
                "parse",
                [
                    .init(count: 61, culprit: "App.parse(_:)", wait: nil, frames: ["App.parse(_:)"]),
                    .init(count: 30, culprit: "App.load()", wait: "read(fd 3)", frames: ["__read", "App.load()"]),
                    .init(count: 9, culprit: SpanProfile.otherName, wait: nil, frames: []),
                ])
        ])
        let cause = try #require(causes["parse"])
        #expect(cause.text == "61 % running in App.parse(_:) (61 of 100 samples)")
    }

    @Test func theOtherEntryIsNeverTheCauseAndTiesAreRepeatable() throws {
        let causes = SpanCause.top(of: [
            Self.line(
                "a",
                [
                    .init(count: 50, culprit: SpanProfile.otherName, wait: nil, frames: []),
                    .init(count: 5, culprit: "B.f()", wait: nil, frames: ["B.f()"]),
                    .init(count: 5, culprit: "A.f()", wait: nil, frames: ["A.f()"]),
                ]),
            Self.line("b", [.init(count: 4, culprit: nil, wait: nil, frames: ["0x1 (libc.so.6)"])]),
            Self.line("c", [.init(count: 7, culprit: SpanProfile.otherName, wait: nil, frames: [])]),
        ])
        #expect(causes["a"]?.text == "8 % running in A.f() (5 of 60 samples)")
        #expect(causes["b"]?.text == "100 % running outside the program's own code (4 of 4 samples)")
        #expect(causes["c"] == nil, "only folded stacks: no cause to name")
    }

    @Test func linesWithoutProfilesOrSamplesHaveNoCause() {
        var noProfile = PerformanceReport.Event(kind: .span, name: "x", session: "s", timestamp: .init(unixMs: 0))
        noProfile.extra["profile"] = .string("not a profile")
        let causes = SpanCause.top(of: [noProfile, Self.line("y", [])])
        #expect(causes.isEmpty)
    }
}
