// `perf-report export` through the real binary: every format to stdout and to a file, usage
// errors, unreadable reports, an older report without intervals, and nothing to export.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct ExportCommandTests {
    /// The export tests' fixture report (built in code by PerfReportTests' ExportFixture, committed as a file).
    static let report = TestFixtures.folder("export").appendingPathComponent("report.json")

    /// The fixture report with `change` applied, written into `directory`.
    static func variant(_ name: String, in directory: URL, _ change: (inout [String: Any]) -> Void) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])
        change(&object)
        let url = directory.appendingPathComponent(name)
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        return url.path
    }

    /// The text formats: pprof's binary file has tests of its own (PprofCommandTests).
    @Test(arguments: ExportCommand.formats.filter { $0.kind != .profile }.map(\.name))
    func everyFormatGoesToStdoutAndToAFile(format: String) throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["export", Self.report.path, "--format", format], in: directory)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.isEmpty, "the fixture has intervals: nothing to warn about")
        #expect(!stdout.isEmpty)
        let (written, writeErr, writeStatus) = try CLIFixture.runBinary(
            ["export", Self.report.path, "--format", format, "-o", "out.\(format)"], in: directory)
        #expect(writeStatus == 0, "\(writeErr)")
        #expect(written == "out.\(format)\n")
        let file = try String(contentsOf: directory.appendingPathComponent("out.\(format)"), encoding: .utf8)
        #expect(file == stdout, "the file holds what stdout would")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty, "the temporary file was renamed")
        switch format {
        case "prometheus": #expect(stdout.hasPrefix("# HELP perf_"))
        case "html": #expect(stdout.hasPrefix("<!doctype html>"))
        default: #expect((try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) != nil)
        }
    }

    @Test func theFormatListNamesEveryFormat() {
        #expect(ExportCommand.formatList == "chrome, otlp, prometheus, html or pprof")
        for format in ExportCommand.formats { #expect(ExportCommand.formatList.contains(format.name)) }
        #expect(ExportCommand.spec.help.contains("--format <format>       \(ExportCommand.formatList) (required)."))
    }

    @Test(arguments: [
        (["export", "r.json"], "Error: missing '--format <format>' (\(ExportCommand.formatList))"),
        (["export", "r.json", "--format", "svg"], "Error: '--format' must be \(ExportCommand.formatList), not 'svg'"),
        (["export", "--format", "chrome"], "Error: missing expected argument '<report>'"),
    ])
    func usageErrorsExitTwo(arguments: [String], message: String) throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (stdout, stderr, status) = try CLIFixture.runBinary(arguments, in: directory)
        #expect(status == ExitCode.usage.rawValue)
        #expect(stderr.hasPrefix(message + "\nUsage: perf-report export"), "\(stderr)")
        #expect(stdout.isEmpty)
    }

    @Test func anOldReportStillGivesAPageThatSaysWhatIsMissing() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: CLIFixture.golden)) as? [String: Any])
        report["intervals"] = nil
        try JSONSerialization.data(withJSONObject: report).write(to: directory.appendingPathComponent("old.json"))
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["export", "old.json", "--format", "html", "-o", "old.html"], in: directory)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("no span intervals in this report; histograms only"))
        #expect(stdout == "old.html\n")
        let page = try String(contentsOf: directory.appendingPathComponent("old.html"), encoding: .utf8)
        #expect(page.hasPrefix("<!doctype html>"))
        #expect(page.contains("<svg"), "the histograms are still drawn")
    }

    @Test func unreadableOrInvalidReportsExitThreeNamingTheFile() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("broken.json"))
        for (name, problem) in [("missing.json", "no such file"), ("broken.json", "not valid JSON")] {
            let (stdout, stderr, status) = try CLIFixture.runBinary(
                ["export", name, "--format", "chrome", "-o", "t.json"], in: directory)
            #expect(status == ExitCode.invalidInput.rawValue)
            #expect(stderr.contains("/\(name)'") && stderr.contains(problem), "\(stderr)")
            #expect(stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("t.json").path))
        }
    }

    @Test func olderReportSaysSoAndExportsWhatItHas() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try Self.variant("old.json", in: directory) { $0["intervals"] = nil }
        let (stdout, stderr, status) = try CLIFixture.runBinary(["export", old, "--format", "chrome"], in: directory)
        #expect(status == 0)
        #expect(stderr == "perf-report: no span intervals in this report; histograms only\n")
        #expect(stdout.contains("\"cat\":\"ledger\""), "the ledger's slow spans are drawn")
        let (metrics, metricsErr, metricsStatus) = try CLIFixture.runBinary(
            ["export", old, "--format", "prometheus"], in: directory)
        #expect(metricsStatus == 0 && metricsErr.isEmpty, "metrics never needed intervals")
        #expect(metrics.contains("perf_span_duration_seconds_bucket{"))
    }

    @Test(arguments: ["chrome", "otlp"])
    func nothingToDrawExitsFourAndWritesNoFile(format: String) throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bare = try Self.variant("bare.json", in: directory) { object in
            object["intervals"] = nil
            object["ledger"] = ["events": []]
        }
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["export", bare, "--format", format, "-o", "out.json"], in: directory)
        #expect(status == ExitCode.incompleteData.rawValue)
        #expect(stderr.hasPrefix(ExportCommand.noIntervalsMessage + "perf-report: nothing to export from '\(bare)'"))
        #expect(stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.json").path))
        let (_, _, metricsStatus) = try CLIFixture.runBinary(["export", bare, "--format", "prometheus"], in: directory)
        #expect(metricsStatus == 0, "histograms alone are worth exporting as metrics")
    }

    @Test func unwritableOutputExitsThreeNamingIt() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = PerfReportCommand.run(
            ["export", Self.report.path, "--format", "otlp", "-o", directory.path + "/missing/dir/out.json"],
            environment: [:], progress: { _ in })
        #expect(result.status == ExitCode.invalidInput)
        #expect(result.stderr.hasPrefix("perf-report: cannot write '"), "\(result.stderr)")
    }

    @Test func unwritableOutputNamesTheUsersPathNotTheTemporaryFile() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.path + "/nonexistent-dir/x.html"
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["export", Self.report.path, "--format", "html", "-o", output], in: directory)
        #expect(status == ExitCode.invalidInput.rawValue)
        #expect(
            stderr == "perf-report: cannot write '\(output)': \(String(cString: strerror(ENOENT)).lowercased()) "
                + "(errno \(ENOENT))\n")
        #expect(!stderr.contains(".tmp-"), "the temporary file's name is ours, not the user's")
        #expect(stdout.isEmpty)
    }
}
