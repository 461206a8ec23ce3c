// A small ledger of over-budget span lines with children, scopes and profiles, as the runtime
// writes them, and the report built from it: the input of the summary, export and pprof tests.
import Foundation
import PerfCore
import PerfTestSupport

@testable import Perf
@testable import PerfReport

enum SpanProfileFixture {
    static let session = "s-profile"
    static let t0: Int64 = 1_796_000_000_000
    static let readWait = "read(fd 7 → socket 127.0.0.1:5432)"
    static let readStack = ["__read", "App.Store.load(id:)", "App.handle(_:)", "swift_job_run"]
    static let parseStack = ["App.parse(_:)", "App.handle(_:)", "swift_job_run"]

    /// Two `api.get` lines (scopes 7 and 9) with profiles; a `db.query` child of the first, and one
    /// whose parent wrote no line (scope 5); 70 samples in all: 45 in the read, 22 parsing, 3 other.
    static var lines: [LedgerEvent] {
        var first = LedgerEvent(kind: .span, name: "api.get", session: session, timestampMs: t0 + 1_000)
        first.durationMs = 500
        first.budgetMs = 100
        first.exit = "success"
        first.extra["scope"] = .int(7)
        first.extra["selfMs"] = .double(380)
        first.extra["children"] = .objects([
            PerformanceReport.SpanChild(name: "db.query", count: 3, totalMs: 120, maxMs: 60).ledgerValue
        ])
        first.extra["profile"] =
            SpanProfile(
                samples: 50, suspended: 2, missed: 1, intervalMs: 10,
                top: [
                    .init(count: 37, culprit: "App.Store.load(id:)", wait: readWait, frames: readStack),
                    .init(count: 10, culprit: "App.parse(_:)", wait: nil, frames: parseStack),
                    .init(count: 3, culprit: SpanProfile.otherName, wait: nil, frames: []),
                ]
            ).ledgerValue
        var child = LedgerEvent(kind: .span, name: "db.query", session: session, timestampMs: t0 + 900)
        child.durationMs = 60
        child.budgetMs = 50
        child.exit = "success"
        child.extra["parentScope"] = .int(7)
        var orphanChild = LedgerEvent(kind: .span, name: "db.query", session: session, timestampMs: t0 + 3_000)
        orphanChild.durationMs = 55
        orphanChild.budgetMs = 50
        orphanChild.exit = "success"
        orphanChild.extra["parentScope"] = .int(5)
        var second = LedgerEvent(kind: .span, name: "api.get", session: session, timestampMs: t0 + 2_000)
        second.durationMs = 300
        second.budgetMs = 100
        second.exit = "success"
        second.extra["scope"] = .int(9)
        second.extra["profile"] =
            SpanProfile(
                samples: 20, intervalMs: 10,
                top: [
                    .init(count: 12, culprit: "App.parse(_:)", wait: nil, frames: parseStack),
                    .init(count: 8, culprit: "App.Store.load(id:)", wait: readWait, frames: readStack),
                ]
            ).ledgerValue
        return [child, first, second, orphanChild]
    }

    /// The lines as a ledger file in a fresh directory, built into a report and read back.
    static func report() throws -> PerformanceReport {
        try PerformanceReport(bytes: try reportBytes(), path: "profiles.json")
    }

    /// The built report's bytes.
    static func reportBytes() throws -> [UInt8] {
        let directory = try TemporaryDirectory("span-profile-fixture")
        defer { directory.remove() }
        var bytes: [UInt8] = []
        for line in lines { LedgerEncoder.encodeLine(line, into: &bytes) }
        try Data(bytes).write(to: directory.file(LedgerWriter.fileName))
        return try ReportBuilder(directory: directory.url).build()
    }

    /// The export input of the built report.
    static func exportInput() throws -> ExportInput {
        try ExportInput(bytes: try reportBytes(), path: "profiles.json")
    }
}
