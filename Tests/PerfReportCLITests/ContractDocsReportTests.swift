// ReportFormat.md and DiagnosticsFormat.md against real documents: every key path a report or a
// diagnostic payload contains is documented with its type, every `always` key is there, and no
// documented path is fiction.
import Foundation
import PerfCore
import Testing

@testable import Perf

@Suite struct ContractDocsReportTests {
    static func reportTable() throws -> KeyPathTable {
        KeyPathTable(try ContractArticle(module: "Perf", "ReportFormat"), headings: ["## Keys", "## Histogram object"])
    }

    /// The reports of the fixture directory: in full, and under a cap small enough to truncate it.
    static func fixtureReports() throws -> [(name: String, bytes: [UInt8])] {
        [
            ("fixture report", try ReportBuilder(directory: CLIFixture.data).build()),
            (
                "fixture report capped at 6 KiB",
                try ReportBuilder(directory: CLIFixture.data, capBytes: 6 * 1024).build()
            ),
        ]
    }

    @Test func theArticleFollowsItsOwnConvention() throws {
        let table = try Self.reportTable()
        #expect(table.unreadable.isEmpty, "rows whose type or presence the convention does not define")
        #expect(table.entries.count > 50, "the tables were found and read")
        for path in table.entries.keys where !path.hasPrefix("<") && path.contains(".") {
            var parent = KeyPathTable.parent(of: path)
            if parent.hasSuffix("[]") { parent.removeLast(2) }
            #expect(table.entries[parent] != nil, "`\(path)` has no documented parent")
        }
    }

    @Test func everyKeyPathOfTheFixtureReportsIsDocumented() throws {
        let ledger = try LedgerContract()
        var walk = KeyPathWalk(try Self.reportTable(), checkLedgerLine: ledger.problems)
        for report in try Self.fixtureReports() {
            walk.walk(try JSONValue.parse(report.bytes), name: report.name)
        }
        #expect(walk.problems.isEmpty, "\(walk.problems.joined(separator: "\n"))")
        #expect(walk.unobserved.isEmpty, "documented but in no fixture report: \(walk.unobserved)")
    }

    @Test func theDocumentedConstantsAreTheBuildersOwn() throws {
        let report = try JSONValue.parse(try ReportBuilder(directory: CLIFixture.data).build()).object ?? [:]
        let article = try ContractArticle(module: "Perf", "ReportFormat")
        let keys = Dictionary(article.table(under: "## Keys").map { ($0.key, $0.cells.last ?? "") }) { $1 }
        #expect(report["schema"] == .string(ReportBuilder.schema))
        #expect(keys["schema"]?.contains("`\"\(ReportBuilder.schema)\"`") == true)
        #expect(report["schemaVersion"] == .integer(Int64(ReportBuilder.schemaVersion)))
        #expect(keys["schemaVersion"]?.hasSuffix(", \(ReportBuilder.schemaVersion)") == true)
        #expect(keys["generator"]?.contains("`\"\(ReportBuilder.generator)\"`") == true)
    }

    /// The compatibility rules of ReportFormat.md, through `perf-report summary`.
    @Test func unknownKeysAreIgnoredAndANewerMajorVersionIsRejected() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard case .object(var report) = try JSONValue.parse(try Data(contentsOf: CLIFixture.golden)) else {
            Issue.record("the golden report is not an object")
            return
        }
        func summary(_ members: [String: JSONValue], _ name: String) throws -> Int {
            let url = directory.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: Self.foundation(.object(members))).write(to: url)
            return ContractDocsCLI.run(["summary", url.path]).status
        }
        var extended = report
        extended["aKeyFromTheFuture"] = .object(["nested": .array([.integer(1)])])
        if case .object(var spans)? = extended["spans"], case .object(var span)? = spans["api.get"] {
            span["p999Ms"] = .number(1.5)
            spans["api.get"] = .object(span)
            extended["spans"] = .object(spans)
        }
        #expect(try summary(extended, "extended.json") == 0, "unknown keys are ignored")
        report["schemaVersion"] = .integer(Int64(ReportBuilder.schemaVersion + 1))
        #expect(try summary(report, "newer.json") == 3, "a newer major version is rejected")
        for required in ["schema", "schemaVersion", "spans", "sessions"] {
            var without = report
            without["schemaVersion"] = .integer(1)
            without[required] = nil
            #expect(try summary(without, "without-\(required).json") == 3, "`\(required)` is required")
        }
    }

    static func foundation(_ value: JSONValue) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let flag): flag
        case .integer(let integer): integer
        case .number(let number): number
        case .string(let text): text
        case .array(let items): items.map(foundation)
        case .object(let members): members.mapValues(foundation)
        }
    }
}

@Suite struct ContractDocsDiagnosticsTests {
    static func table() throws -> KeyPathTable {
        KeyPathTable(
            try ContractArticle(module: "Perf", "DiagnosticsFormat"), headings: ["## Keys", "## Histogram object"])
    }

    @Test func everyKeyPathOfAPayloadIsDocumented() throws {
        let table = try Self.table()
        #expect(table.unreadable.isEmpty)
        var histogram = Perf.Histogram()
        histogram.record(nanos: 1_500_000)
        var process = ProcessFigures.current()
        process.pressureTotalUs["cpu.some"] = process.pressureTotalUs["cpu.some"] ?? 1
        let snapshot = DiagnosticSnapshot(
            session: "0123456789abcdef", takenAtMs: 1_764_680_400_000, reason: "on-demand",
            app: Perf.AppInfo(name: "app", version: "1.0", build: "7"), host: .current(), process: process,
            spans: ["api.get": histogram], hangs: ["main": histogram],
            intervals: SpanIntervals(
                capacity: 16, recorded: 2, epochUnixMs: 1_764_680_400_000, threads: [7: "main"],
                spans: [
                    .init(name: "api.get", threadID: 7, startNanos: 0, durationNanos: 10, exit: "success", budgetMs: 1),
                    .init(name: "boot", threadID: 7, startNanos: 20, durationNanos: 5, exit: "success", budgetMs: nil),
                ]),
            spanSites: ["api.get": ["App/API.swift:12"]],
            spanTallies: ["api.get": SpanTally(overBudget: 1, overBudgetNanos: 1_500_000, failure: 1)])
        var walk = KeyPathWalk(table)
        walk.walk(try JSONValue.parse(snapshot.jsonBytes), name: "DiagnosticSnapshot.jsonBytes")
        let folder = CLIFixture.data.appendingPathComponent("perf-diagnostics")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
            guard (try? DiagnosticSnapshot(jsonBytes: [UInt8](bytes))) != nil else { continue }
            walk.walk(try JSONValue.parse(bytes), name: name)
        }
        #expect(walk.problems.isEmpty, "\(walk.problems.joined(separator: "\n"))")
        #expect(walk.unobserved.isEmpty, "documented but in no payload: \(walk.unobserved)")
    }

    @Test func aNewerMajorVersionAndAnotherSchemaAreRejected() throws {
        let bytes = DiagnosticSnapshot(
            session: "s", takenAtMs: 0, reason: "periodic", app: Perf.AppInfo(name: "app"), host: .current(),
            process: ProcessFigures(), spans: [:], hangs: [:]
        ).jsonBytes
        let text = String(decoding: bytes, as: UTF8.self)
        #expect((try? DiagnosticSnapshot(jsonBytes: bytes)) != nil)
        let newer = text.replacingOccurrences(
            of: "\"schemaVersion\":\(DiagnosticSnapshot.schemaVersion)",
            with: "\"schemaVersion\":\(DiagnosticSnapshot.schemaVersion + 1)")
        #expect(newer != text)
        #expect((try? DiagnosticSnapshot(jsonBytes: Array(newer.utf8))) == nil)
        let other = text.replacingOccurrences(of: "\"perf-diagnostics\"", with: "\"perf-report\"")
        #expect((try? DiagnosticSnapshot(jsonBytes: Array(other.utf8))) == nil)
        let extended = text.replacingOccurrences(of: "{\"app\"", with: "{\"aNewKey\":[1,{}],\"app\"")
        #expect(extended != text)
        #expect((try? DiagnosticSnapshot(jsonBytes: Array(extended.utf8))) != nil, "unknown keys are ignored")
    }
}

/// The demo workload, run once by the real binary: a report and a ledger of a real process (host,
/// payloads, flight recorder, a real hang, diagnostic lines) rather than of hand-made files.
@Suite struct ContractDocsDemoTests {
    @Test func theDemoReportAndLedgerMatchTheArticles() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, stderr, status) = try CLIFixture.runBinary(
            ["demo", "--dir", "data", "-o", "report.json"], in: directory)
        try #require(status == 0, "demo failed: \(stderr)")
        let ledger = try LedgerContract()
        var walk = KeyPathWalk(try ContractDocsReportTests.reportTable(), checkLedgerLine: ledger.problems)
        walk.walk(
            try JSONValue.parse(try Data(contentsOf: directory.appendingPathComponent("report.json"))),
            name: "demo report")
        #expect(walk.problems.isEmpty, "\(walk.problems.joined(separator: "\n"))")

        let lines = try ContractDocsLedgerTests.lines(of: directory.appendingPathComponent("data/perf-events.jsonl"))
        for line in lines {
            let problems = ledger.problems(line)
            #expect(problems.isEmpty, "\(problems) in \(line)")
        }
        let kinds = Set(lines.compactMap { $0.object?["kind"]?.string })
        #expect(kinds.isSuperset(of: ["session", "span", "note", "diagnostic"]), "\(kinds)")
    }
}
