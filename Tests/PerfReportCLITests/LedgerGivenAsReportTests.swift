// A ledger handed to a command that reads a report: the message says what the file is and the
// command that builds the report from it, with the documented exit code for invalid input.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct LedgerGivenAsReportTests {
    /// The fixture's ledger, copied into a folder of a test's own under `folder`.
    static func ledger(in folder: String, name: String = "perf-events.jsonl", firstLines: Int? = nil) throws -> (
        directory: URL, file: String
    ) {
        let directory = try CLIFixture.temporaryDirectory()
        let data = directory.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        var text = try String(
            contentsOf: CLIFixture.data.appendingPathComponent("perf-events.jsonl"), encoding: .utf8)
        if let firstLines { text = text.split(separator: "\n").prefix(firstLines).joined(separator: "\n") + "\n" }
        try text.write(to: data.appendingPathComponent(name), atomically: true, encoding: .utf8)
        return (directory, folder + "/" + name)
    }

    @Test(arguments: [
        ["summary"], ["export", "--format", "html"], ["check", "--budgets", "budgets.json"], ["compare", "other.json"],
    ])
    func aLedgerIsNamedAndTheBuildCommandSuggested(command: [String]) throws {
        let (directory, file) = try Self.ledger(in: "service data")
        defer { try? FileManager.default.removeItem(at: directory) }
        let budgets = try CheckFixture.write(CheckFixture.budgets, "budgets.json", in: directory)
        let ledger = directory.appendingPathComponent(file).path
        let arguments =
            [command[0], ledger]
            + command.dropFirst().map { $0.hasSuffix(".json") ? directory.appendingPathComponent($0).path : $0 }
        #expect(arguments.contains(budgets) == (command[0] == "check"))
        let result = PerfReportCommand.run(arguments, environment: [:], progress: { _ in })
        #expect(result.status == .invalidInput, "\(result)")
        #expect(
            result.stderr
                == "perf-report: cannot read report '\(ledger)': a Perf ledger (one event per line), not a "
                + "performance report; build the report from its data directory: perf-report build --dir "
                + "'\(directory.path)/service data'\n", "\(result.stderr)")
    }

    /// One line is a JSON object: it is told by its `v`, `ts` and `kind`, not taken for a report
    /// without a schema; a ledger under another name is told by its first line.
    @Test func aOneLineLedgerUnderAnotherNameIsALedgerToo() throws {
        let (directory, file) = try Self.ledger(in: "data", name: "events.txt", firstLines: 1)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = PerfReportCommand.run(
            ["summary", directory.appendingPathComponent(file).path], environment: [:], progress: { _ in })
        #expect(result.status == .invalidInput)
        #expect(result.stderr.hasSuffix("perf-report build --dir \(directory.path)/data\n"), "\(result.stderr)")
    }
}
